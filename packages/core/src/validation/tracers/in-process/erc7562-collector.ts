import type { Common } from "@ethereumjs/common";
import { type EVM, EVMError, getOpcodesForHF, type Message } from "@ethereumjs/evm";
import type { EVMResult } from "@ethereumjs/evm";
import { bytesToHex, createAddressFromString } from "@ethereumjs/util";
import type { Address, Hex } from "viem";
import type { CodeKind, PhaseTrace, StorageAccesses, TracedCall, TracedCodeAccess } from "../../../ports/validation-trace.ts";
import type { Prestate } from "../prestate.ts";
import { cacheJumpAnalysis } from "./code-cache.ts";

type OpcodeList = ReturnType<typeof getOpcodesForHF>;
type Handler = NonNullable<ReturnType<OpcodeList["handlers"]["get"]>>;
type RunState = Parameters<Handler>[0];
type CustomOpcode = NonNullable<NonNullable<ConstructorParameters<typeof EVM>[0]>["customOpcodes"]>[number];

/** Opcodes counted by name: OP-011's environment opcodes, GAS (OP-012), BALANCE/SELFBALANCE (OP-080). */
const countedOpcodes = new Map<number, string>([
  [0x32, "ORIGIN"],
  [0x3a, "GASPRICE"],
  [0x40, "BLOCKHASH"],
  [0x41, "COINBASE"],
  [0x42, "TIMESTAMP"],
  [0x43, "NUMBER"],
  [0x44, "PREVRANDAO"],
  [0x45, "GASLIMIT"],
  [0x48, "BASEFEE"],
  [0x49, "BLOBHASH"],
  [0x4a, "BLOBBASEFEE"],
  [0xff, "SELFDESTRUCT"],
  [0x5a, "GAS"],
  [0x31, "BALANCE"],
  [0x47, "SELFBALANCE"],
]);
const callOpcodes = new Map<number, TracedCall["type"]>([
  [0xf1, "CALL"],
  [0xf2, "CALLCODE"],
  [0xf4, "DELEGATECALL"],
  [0xfa, "STATICCALL"],
]);
const codeOpcodes = new Map<number, TracedCodeAccess["opcode"]>([
  [0x3b, "EXTCODESIZE"],
  [0x3c, "EXTCODECOPY"],
  [0x3f, "EXTCODEHASH"],
]);
const storageOpcodes = new Map<number, { transient: boolean; write: boolean }>([
  [0x54, { transient: false, write: false }],
  [0x55, { transient: false, write: true }],
  [0x5c, { transient: true, write: false }],
  [0x5d, { transient: true, write: true }],
]);
const ISZERO = 0x15;
const KECCAK256 = 0x20;
const CREATE = 0xf0;
const CREATE2 = 0xf5;
const INVALID = 0xfe;

/**
 * Collects the ERC-7562 trace of a validation run in `@ethereumjs/evm`: the opcodes the rules look
 * at are re-registered (`customOpcodes`, public API) with their own gas and logic, each wrapped
 * to record what it touches; phases open and close on the EntryPoint's calls (`beforeMessage`,
 * `afterMessage`). Nothing runs per ordinary opcode.
 */
export class Erc7562Collector {
  readonly phases: PhaseTrace[] = [];
  readonly keccakInputs: Hex[] = [];
  private phase: PhaseTrace | undefined;
  private depth = 0;
  private readonly entryPoint: string;
  private prestate: Prestate = {};

  constructor(entryPoint: Address) {
    this.entryPoint = entryPoint.toLowerCase();
  }

  /** Start a new run on `prestate` (for first values of slots). */
  reset(prestate: Prestate) {
    this.phases.length = 0;
    this.keccakInputs.length = 0;
    this.phase = undefined;
    this.depth = 0;
    this.prestate = prestate;
  }

  /**
   * The wrapped opcodes, for `createEVM({ customOpcodes })`; and INVALID and every opcode the fork
   * leaves unassigned, on which the EVM halts before any handler runs: here they are recorded
   * (OP-011, OP-013), then halt the frame the same way.
   */
  customOpcodes(common: Common): CustomOpcode[] {
    const { handlers, dynamicGasHandlers, opcodes } = getOpcodesForHF(common);
    const wrapped = [
      ...countedOpcodes.keys(),
      ...callOpcodes.keys(),
      ...codeOpcodes.keys(),
      ...storageOpcodes.keys(),
      KECCAK256,
      CREATE,
      CREATE2,
    ];
    const halting = Array.from({ length: 256 }, (_, code) => code).filter((code) => code === INVALID || !opcodes.has(code));
    const halts = halting.map((code): CustomOpcode => ({ opcode: code, opcodeName: "RECORDED_INVALID", baseFee: 0, logicFunction: this.halt(code) }));
    const wrappers = wrapped.flatMap((code) => {
      const info = opcodes.get(code);
      const handler = handlers.get(code);
      if (!info || !handler) return [];
      const gasFunction = dynamicGasHandlers.get(code);
      return [
        {
          opcode: code,
          opcodeName: info.name,
          baseFee: info.fee,
          ...(gasFunction ? { gasFunction } : {}),
          logicFunction: this.wrap(code, handler),
        } as CustomOpcode,
      ];
    });
    return [...halts, ...wrappers];
  }

  /** Follow frames: a call the EntryPoint makes (depth 1) opens a phase. */
  attach(evm: EVM) {
    evm.events.on("beforeMessage", (message: Message) => this.enter(message));
    evm.events.on("afterMessage", (result: EVMResult) => this.exit(result));
  }

  private enter(message: Message) {
    this.depth = message.depth;
    if (message.depth === 1 && message.caller.toString() === this.entryPoint) {
      this.phase = {
        to: (message.to?.toString() ?? "0x") as Address,
        selector: bytesToHex(message.data.subarray(0, 4)) as Hex,
        opcodes: {},
        storage: {},
        transientStorage: {},
        calls: [],
        codeAccesses: [],
        creates: [],
        outOfGas: false,
      };
      this.phases.push(this.phase);
    }
  }

  private exit(result: EVMResult) {
    if (this.phase && result.execResult.exceptionError?.error === "out of gas") this.phase.outOfGas = true;
    if (this.depth === 1) this.phase = undefined;
    this.depth--;
  }

  private wrap(code: number, original: Handler): Handler {
    const collector = this;
    const handler: Handler = (runState, common) => {
      cacheJumpAnalysis(runState.interpreter);
      return original(runState, common);
    };
    const name = countedOpcodes.get(code);
    if (name) {
      const afterGas = code === 0x5a;
      return function counted(runState, common) {
        collector.count(runState, afterGas ? gasName(runState) : name);
        return handler(runState, common);
      };
    }
    const storage = storageOpcodes.get(code);
    if (storage) {
      return function stored(runState, common) {
        collector.storage(runState, storage.transient, storage.write);
        return handler(runState, common);
      };
    }
    if (code === KECCAK256) {
      return function keccak(runState, common) {
        collector.keccak(runState);
        return handler(runState, common);
      };
    }
    const call = callOpcodes.get(code);
    if (call) {
      return async function called(runState, common) {
        await collector.call(runState, call);
        return handler(runState, common);
      };
    }
    const codeOpcode = codeOpcodes.get(code);
    if (codeOpcode) {
      return async function codeAccess(runState, common) {
        await collector.codeAccess(runState, codeOpcode);
        return handler(runState, common);
      };
    }
    const opcode = code === CREATE ? "CREATE" : "CREATE2";
    return async function create(runState, common) {
      await handler(runState, common);
      collector.created(runState, opcode);
    };
  }

  /** Records INVALID or an unassigned opcode, then halts the frame as the EVM does (spending all its gas). */
  private halt(code: number): Handler {
    const name = code === INVALID ? "INVALID" : `0x${code.toString(16).padStart(2, "0")}`;
    return (runState) => {
      this.count(runState, name);
      throw new EVMError(EVMError.errorMessages.INVALID_OPCODE);
    };
  }

  /** The phase an opcode of this frame belongs to; undefined outside phases and for the EntryPoint's own code. */
  private phaseOf(runState: RunState): PhaseTrace | undefined {
    if (!this.phase) return undefined;
    return runState.env.address.toString() === this.entryPoint ? undefined : this.phase;
  }

  private count(runState: RunState, name: string | undefined) {
    const phase = this.phaseOf(runState);
    if (phase && name) phase.opcodes[name] = (phase.opcodes[name] ?? 0) + 1;
  }

  private storage(runState: RunState, transient: boolean, write: boolean) {
    const phase = this.phase;
    if (!phase) return;
    const address = runState.env.address.toString() as Address;
    const slot = word(runState.stack.peek(1)[0]!);
    const accesses: StorageAccesses = transient ? phase.transientStorage : phase.storage;
    accesses[address] ??= {};
    const slots = accesses[address];
    const access = slots[slot];
    if (access) {
      if (write) access.write = true;
      else access.read = true;
      return;
    }
    slots[slot] = write
      ? { read: false, write: true }
      : { read: true, write: false, firstValue: transient ? word(0n) : word(BigInt(this.prestate[address]?.storage?.[slot] ?? 0)) };
  }

  private keccak(runState: RunState) {
    if (!this.phase) return;
    const [offset, size] = runState.stack.peek(2) as [bigint, bigint];
    if (size < 32n) return;
    const input = readMemory(runState, Number(offset), Number(size));
    if (input.subarray(0, 12).every((b) => b === 0)) this.keccakInputs.push(bytesToHex(input) as Hex);
  }

  private async call(runState: RunState, type: TracedCall["type"]) {
    const phase = this.phaseOf(runState);
    if (!phase) return;
    const withValue = type === "CALL" || type === "CALLCODE";
    const stack = runState.stack.peek(withValue ? 5 : 4) as bigint[];
    const to = address(stack[1]!);
    const [inOffset, inSize] = withValue ? [stack[3]!, stack[4]!] : [stack[2]!, stack[3]!];
    const input = inSize === 0n ? new Uint8Array(0) : readMemory(runState, Number(inOffset), Math.min(Number(inSize), 36));
    phase.calls.push({
      type,
      from: runState.env.address.toString() as Address,
      to,
      value: withValue ? stack[2]! : 0n,
      input: bytesToHex(input) as Hex,
      code: await codeKind(runState, to),
    });
  }

  private async codeAccess(runState: RunState, opcode: TracedCodeAccess["opcode"]) {
    const phase = this.phaseOf(runState);
    if (!phase) return;
    const target = address(runState.stack.peek(1)[0]!);
    phase.codeAccesses.push({
      opcode,
      from: runState.env.address.toString() as Address,
      address: target,
      code: await codeKind(runState, target),
      thenIszero: runState.code[runState.programCounter] === ISZERO,
    });
  }

  private created(runState: RunState, opcode: "CREATE" | "CREATE2") {
    const phase = this.phaseOf(runState);
    if (!phase) return;
    const result = runState.stack.peek(1)[0]!;
    phase.creates.push({ opcode, from: runState.env.address.toString() as Address, address: result === 0n ? undefined : address(result) });
  }
}

/** `GAS` counts only when the next opcode is not a `*CALL` (OP-012). */
function gasName(runState: RunState): string | undefined {
  return callOpcodes.has(runState.code[runState.programCounter]!) ? undefined : "GAS";
}

/** Memory bytes without growing memory (which would change MSIZE and later gas); zero past its end. */
function readMemory(runState: RunState, offset: number, size: number): Uint8Array {
  const store = runState.memory._store;
  const out = new Uint8Array(size);
  if (offset < store.length) out.set(store.subarray(offset, Math.min(offset + size, store.length)));
  return out;
}

async function codeKind(runState: RunState, target: Address): Promise<CodeKind> {
  const code = await runState.stateManager.getCode(createAddressFromString(target));
  if (code.length === 0) return "none";
  return code.length === 23 && code[0] === 0xef && code[1] === 0x01 && code[2] === 0x00 ? "delegated" : "contract";
}

function word(value: bigint): Hex {
  return `0x${value.toString(16).padStart(64, "0")}`;
}

function address(value: bigint): Address {
  return `0x${(value & ((1n << 160n) - 1n)).toString(16).padStart(40, "0")}`;
}
