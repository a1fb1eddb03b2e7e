import { type Address, type Hex, toFunctionSelector } from "viem";
import { getAddress } from "../../utils/get-address.ts";
import type { EntityRole } from "../../userop/entities.ts";
import { factoryOf, paymasterOf, type UserOperation } from "../../userop/types.ts";
import type { PhaseTrace, StorageAccesses, ValidationTrace } from "../../ports/validation-trace.ts";
import { associatedSlots, type AssociatedSlots } from "./associated-slots.ts";
import type { RuleViolation } from "./rule-violation.ts";

/** Which entities of the operation are staked (SREP-010), or exempt as whitelisted. */
export interface EntityStakes {
  account: boolean;
  factory: boolean;
  paymaster: boolean;
}

export interface CheckValidationRulesParameters {
  op: UserOperation;
  entryPoint: Address;
  /** The EntryPoint's SenderCreator: the phase it runs is the factory's. */
  senderCreator: Address;
  trace: ValidationTrace;
  stakes: EntityStakes;
  /** The chain has the P256VERIFY precompile at 0x100 (RIP-7212 / EIP-7951) and entities may call it (OP-062). Default false. */
  p256Precompile?: boolean | undefined;
}

/** OP-011: opcodes that read the environment (or end the frame) and so are never allowed. */
const bannedOpcodes = new Set([
  "ORIGIN",
  "GASPRICE",
  "BLOCKHASH",
  "COINBASE",
  "TIMESTAMP",
  "NUMBER",
  "PREVRANDAO",
  "GASLIMIT",
  "BASEFEE",
  "BLOBHASH",
  "BLOBBASEFEE",
  "INVALID",
  "SELFDESTRUCT",
]);

const selectors = {
  initEip7702Sender: toFunctionSelector("initEip7702Sender(address,bytes)"),
  depositTo: toFunctionSelector("depositTo(address)"),
  incrementNonce: toFunctionSelector("incrementNonce(uint192)"),
};

/** The highest core precompile after Prague (BLS12-381 ends at 0x11). */
const lastCorePrecompile = 0x11n;
const p256Address = 0x100n;
/** Addresses this low are precompile territory; without code they are a precompile or nothing. */
const lastPrecompileRange = 0xffffn;

/**
 * The ERC-7562 validation rules for one operation, as a pure function of its normalised trace
 * and its entities' stakes: opcode rules (OP-0xx), storage rules (STO-0xx) and EIP-7702 access
 * (AUTH-030). An empty list means the validation keeps to the rules.
 */
export function checkValidationRules(parameters: CheckValidationRulesParameters): RuleViolation[] {
  const { op, trace, stakes } = parameters;
  const entryPoint = lower(parameters.entryPoint);
  const sender = lower(op.sender);
  const factoryAddress = factoryOf(op);
  const factory = factoryAddress && factoryAddress.length === 42 ? lower(factoryAddress) : undefined;
  const paymaster = paymasterOf(op) ? lower(paymasterOf(op)!) : undefined;
  const associated = associatedSlots(trace.keccakInputs);
  const violations: RuleViolation[] = [];

  for (const phase of trace.phases) {
    const role = phaseRole(phase, { entryPoint, senderCreator: lower(parameters.senderCreator), sender, paymaster });
    if (!role) continue;
    const address = role === "account" ? sender : role === "factory" ? factory : paymaster;
    if (!address) continue;
    const context: PhaseContext = {
      role,
      address,
      staked: stakes[role as keyof EntityStakes] ?? false,
      entryPoint,
      sender,
      factory,
      factoryStaked: stakes.factory,
      paymaster,
      associated,
      p256: parameters.p256Precompile ?? false,
      violate: (rule, subject, allowedIfStaked) => {
        const staker = allowedIfStaked === "factory" ? { role: "factory" as const, address: factory! } : { role, address };
        violations.push({
          rule,
          entity: role,
          address: getAddress(address),
          subject,
          ...(allowedIfStaked ? { allowedIfStaked: { role: staker.role, address: getAddress(staker.address) } } : {}),
        });
      },
    };
    checkOpcodes(phase, context);
    checkCreates(phase, context);
    checkCalls(phase, context);
    checkStorage(phase.storage, "slot", context);
    checkStorage(phase.transientStorage, "transient slot", context);
  }
  return dedupe(violations);
}

interface PhaseContext {
  role: EntityRole;
  address: Address;
  staked: boolean;
  entryPoint: Address;
  sender: Address;
  factory: Address | undefined;
  factoryStaked: boolean;
  paymaster: Address | undefined;
  associated: AssociatedSlots;
  p256: boolean;
  /** Record a violation; `allowedIfStaked` names the entity (this one or the factory) whose stake would allow it. */
  violate(rule: string, subject: string, allowedIfStaked?: "self" | "factory"): void;
}

function phaseRole(
  phase: PhaseTrace,
  known: { entryPoint: Address; senderCreator: Address; sender: Address; paymaster: Address | undefined },
): EntityRole | undefined {
  const to = lower(phase.to);
  if (to === known.senderCreator) return phase.selector === selectors.initEip7702Sender ? "account" : "factory";
  if (to === known.sender) return "account";
  if (to === known.paymaster) return "paymaster";
  return undefined;
}

/** OP-011, OP-012, OP-013, OP-020 and OP-080. */
function checkOpcodes(phase: PhaseTrace, c: PhaseContext) {
  for (const name of Object.keys(phase.opcodes)) {
    if (bannedOpcodes.has(name)) c.violate("OP-011", `uses banned opcode ${name}`);
    else if (name === "GAS") c.violate("OP-012", "uses GAS other than right before a call");
    else if (name.startsWith("0x")) c.violate("OP-013", `uses unassigned opcode ${name}`);
    else if ((name === "BALANCE" || name === "SELFBALANCE") && !c.staked) c.violate("OP-080", `uses ${name}, allowed only to a staked entity`, "self");
  }
  if (phase.outOfGas) c.violate("OP-020", "runs out of gas in validation");
}

/**
 * OP-031/OP-032 with the staked-factory exceptions EREP-060/061: the deployment may CREATE2 the
 * sender once; with a factory, the sender itself may CREATE; with a staked factory, the factory or
 * the sender may use both, and a staked factory's helpers may CREATE.
 */
function checkCreates(phase: PhaseTrace, c: PhaseContext) {
  let senderCreated = false;
  for (const create of phase.creates) {
    const from = lower(create.from);
    const created = create.address ? lower(create.address) : undefined;
    if (c.role === "factory" && create.opcode === "CREATE2" && created === c.sender && !senderCreated) {
      senderCreated = true;
      continue;
    }
    const byEntity = from === c.sender || from === c.factory;
    const allowedIfFactoryStaked = c.role !== "paymaster" && c.factory !== undefined && (byEntity || (c.role === "factory" && create.opcode === "CREATE"));
    if (allowedIfFactoryStaked && c.factoryStaked) continue;
    if (c.role === "account" && create.opcode === "CREATE" && c.factory && from === c.sender) continue;
    // CREATE is among OP-011's banned opcodes but for OP-032's and EREP-060/061's exceptions.
    const rule = create.opcode === "CREATE2" ? "OP-031" : "OP-011";
    c.violate(rule, `uses banned opcode ${create.opcode}${from !== c.address ? ` (from ${from})` : ""}`, allowedIfFactoryStaked ? "factory" : undefined);
  }
}

/** OP-041/042, OP-051..055, OP-061, OP-062 and AUTH-030. */
function checkCalls(phase: PhaseTrace, c: PhaseContext) {
  for (const call of phase.calls) {
    const to = lower(call.to);
    const from = lower(call.from);
    if (to === c.entryPoint) {
      const selector = call.input.slice(0, 10);
      if (selector === selectors.depositTo && depositsFor(call.input) === BigInt(c.sender) && (from === c.sender || from === c.factory)) continue; // OP-052
      if (call.input === "0x" && from === c.sender) continue; // OP-053
      if (selector === selectors.incrementNonce && from === c.sender) continue; // OP-055
      c.violate("OP-054", `calls the EntryPoint (${call.input === "0x" ? "fallback" : selector}) from ${from}`);
      continue;
    }
    if (call.value > 0n && (call.type === "CALL" || call.type === "CALLCODE")) {
      c.violate("OP-061", `calls ${to} with value ${call.value}`);
    }
    if (call.code === "none" && BigInt(to) <= lastPrecompileRange) {
      const value = BigInt(to);
      const allowed = (value >= 1n && value <= lastCorePrecompile) || (value === p256Address && c.p256);
      if (!allowed) c.violate("OP-062", `calls precompile ${to}, which is not allowed`);
      continue;
    }
    useAddress(to, call.code, `${call.type} to`, c);
  }
  for (const access of phase.codeAccesses) {
    const address = lower(access.address);
    if (address === c.entryPoint) {
      if (access.opcode !== "EXTCODESIZE" || !access.thenIszero) c.violate("OP-054", `uses ${access.opcode} on the EntryPoint`);
      continue;
    }
    useAddress(address, access.code, `${access.opcode} of`, c);
  }
}

/** Using an address: it must have code (OP-041, but the sender from the factory, OP-042), and only the sender may be an EIP-7702 account (AUTH-030). */
function useAddress(address: Address, code: PhaseTrace["calls"][number]["code"], how: string, c: PhaseContext) {
  if (code === "none" && !(address === c.sender && c.role === "factory")) {
    c.violate("OP-041", `uses ${how} ${address}, which has no code`);
  }
  if (code === "delegated" && address !== c.sender) c.violate("AUTH-030", `uses ${how} ${address}, an EIP-7702 account that is not the sender`);
}

/** STO-010 to STO-033 (and OP-070 for transient storage). */
function checkStorage(accesses: StorageAccesses, kind: string, c: PhaseContext) {
  for (const [contract, slots] of Object.entries(accesses) as [Address, StorageAccesses[Address]][]) {
    const addr = lower(contract);
    if (addr === c.sender || addr === c.entryPoint) continue; // STO-010; the EntryPoint's own by OP-05x
    for (const [slot, access] of Object.entries(slots) as [Hex, StorageAccesses[Address][Hex]][]) {
      const verb = access.write ? "writes" : "reads";
      if (c.associated(slot, c.sender)) {
        if (!c.factory || c.factoryStaked || c.staked) continue; // STO-021, STO-022
        c.violate("STO-022", `${verb} ${kind} ${slot} of ${addr}, associated with an account not yet deployed, and the factory is unstaked`, "factory");
      } else if (addr === c.address) {
        if (!c.staked) c.violate("STO-031", `${verb} its own ${kind} ${slot}, allowed only when staked`, "self");
      } else if (c.associated(slot, c.address)) {
        if (!c.staked) c.violate("STO-032", `${verb} ${kind} ${slot} of ${addr}, associated with it, allowed only when staked`, "self");
      } else if (!access.write) {
        if (!c.staked) c.violate("STO-033", `reads ${kind} ${slot} of ${addr}, not associated with it or the account, allowed only when staked`, "self");
      } else {
        c.violate("STO-033", `writes ${kind} ${slot} of ${addr}, not associated with it or the account`);
      }
    }
  }
}

/** The address `depositTo(address)` credits, from the call's first 36 bytes; -1 when they are cut short. */
function depositsFor(input: Hex): bigint {
  return input.length === 2 + 2 * 36 ? BigInt(`0x${input.slice(10)}`) : -1n;
}

function dedupe(violations: RuleViolation[]): RuleViolation[] {
  const seen = new Set<string>();
  return violations.filter((v) => {
    const key = `${v.rule} ${v.entity} ${v.subject}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function lower(address: string): Address {
  return address.toLowerCase() as Address;
}
