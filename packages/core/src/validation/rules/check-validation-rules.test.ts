import { type Address, encodeAbiParameters, getAddress, type Hex, keccak256, pad, toFunctionSelector } from "viem";
import { describe, expect, it } from "vitest";
import type { UserOperationV07 } from "../../userop/types.ts";
import type { PhaseTrace, ValidationTrace } from "../../ports/validation-trace.ts";
import { type EntityStakes, checkValidationRules } from "./check-validation-rules.ts";
import { describeViolation } from "./rule-violation.ts";

const entryPoint: Address = "0x0000000071727de22e5e9d8baf0edac6f37da032";
const senderCreator: Address = "0xefc2c1444ebcc4db75e7613d20c6a62ff67a167c";
const sender: Address = "0x1111111111111111111111111111111111111111";
const factory: Address = "0x2222222222222222222222222222222222222222";
const paymaster: Address = "0x3333333333333333333333333333333333333333";
const token: Address = "0x4444444444444444444444444444444444444444";
const other: Address = "0x5555555555555555555555555555555555555555";

const baseOp: UserOperationV07 = {
  sender,
  nonce: 0n,
  callData: "0x",
  callGasLimit: 100_000n,
  verificationGasLimit: 500_000n,
  preVerificationGas: 50_000n,
  maxFeePerGas: 1n,
  maxPriorityFeePerGas: 1n,
  signature: "0x01",
};
const withFactory: UserOperationV07 = { ...baseOp, factory, factoryData: "0x" };
const withPaymaster: UserOperationV07 = { ...baseOp, paymaster, paymasterVerificationGasLimit: 100_000n, paymasterPostOpGasLimit: 0n, paymasterData: "0x" };

type Role = "factory" | "account" | "paymaster";
const phaseTarget: Record<Role, { to: Address; selector: Hex }> = {
  factory: { to: senderCreator, selector: toFunctionSelector("createSender(bytes)") },
  account: { to: sender, selector: toFunctionSelector("validateUserOp((address,uint256,bytes,bytes,bytes32,uint256,bytes32,bytes,bytes),bytes32,uint256)") },
  paymaster: { to: paymaster, selector: "0x52b7512c" },
};

function phase(role: Role, fields: Partial<PhaseTrace> = {}): PhaseTrace {
  return { ...phaseTarget[role], opcodes: {}, storage: {}, transientStorage: {}, calls: [], codeAccesses: [], creates: [], outOfGas: false, ...fields };
}

const unstaked: EntityStakes = { account: false, factory: false, paymaster: false };
const allStaked: EntityStakes = { account: true, factory: true, paymaster: true };
const mappingSlot = (key: Address, base = 0n) => keccak256(encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [key, base]));
const mappingInput = (key: Address, base = 0n) => encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [key, base]);

interface Case {
  name: string;
  op?: UserOperationV07;
  role: Role;
  phase: Partial<PhaseTrace>;
  stakes?: EntityStakes;
  keccak?: Hex[];
  p256?: boolean;
  /** The rule broken, or undefined when the variant is allowed. */
  rule: string | undefined;
}

const opFor = (role: Role) => (role === "factory" ? withFactory : role === "paymaster" ? withPaymaster : baseOp);
const read = (slot: Hex) => ({ [slot]: { read: true, write: false } });
const write = (slot: Hex) => ({ [slot]: { read: false, write: true } });
const depositTo = (account: Address) => `${toFunctionSelector("depositTo(address)")}${pad(account).slice(2)}` as Hex;
const call = (to: Address, extra: Partial<PhaseTrace["calls"][number]> = {}) => ({ type: "CALL" as const, from: sender, to, value: 0n, input: "0x" as Hex, code: "contract" as const, ...extra });

const cases: Case[] = (["factory", "account", "paymaster"] as const).flatMap((role): Case[] => {
  const self = role === "account" ? sender : role === "factory" ? factory : paymaster;
  const op = opFor(role);
  return [
    ...["TIMESTAMP", "NUMBER", "COINBASE", "ORIGIN", "GASPRICE", "BLOCKHASH", "PREVRANDAO", "GASLIMIT", "BASEFEE", "BLOBHASH", "BLOBBASEFEE", "INVALID", "SELFDESTRUCT"].map(
      (name): Case => ({ name: `${role} ${name}`, role, phase: { opcodes: { [name]: 1 } }, rule: "OP-011" }),
    ),
    { name: `${role} GAS not before a call`, role, phase: { opcodes: { GAS: 1 } }, rule: "OP-012" },
    { name: `${role} GAS before a call (not counted) and ordinary opcodes`, role, phase: { opcodes: { SLOAD: 2, CALL: 1 } }, rule: undefined },
    { name: `${role} unassigned opcode`, role, phase: { opcodes: { "0x0c": 1 } }, rule: "OP-013" },
    { name: `${role} out of gas`, role, phase: { outOfGas: true }, rule: "OP-020" },
    ...(["BALANCE", "SELFBALANCE"] as const).flatMap((name): Case[] => [
      { name: `unstaked ${role} ${name}`, role, phase: { opcodes: { [name]: 1 } }, rule: "OP-080" },
      { name: `staked ${role} ${name}`, role, phase: { opcodes: { [name]: 1 } }, stakes: allStaked, rule: undefined },
    ]),
    { name: `${role} calls an address without code`, role, phase: { calls: [call(other, { from: self, code: "none" })] }, rule: "OP-041" },
    { name: `${role} EXTCODESIZE of an address without code`, role, phase: { codeAccesses: [{ opcode: "EXTCODESIZE", from: self, address: other, code: "none", thenIszero: false }] }, rule: "OP-041" },
    { name: `${role} EXTCODEHASH of the EntryPoint`, role, phase: { codeAccesses: [{ opcode: "EXTCODEHASH", from: self, address: entryPoint, code: "contract", thenIszero: false }] }, rule: "OP-054" },
    { name: `${role} EXTCODESIZE ISZERO of the EntryPoint`, role, phase: { codeAccesses: [{ opcode: "EXTCODESIZE", from: self, address: entryPoint, code: "contract", thenIszero: true }] }, rule: undefined },
    { name: `${role} calls the EntryPoint's balanceOf`, role, phase: { calls: [call(entryPoint, { from: self, input: toFunctionSelector("balanceOf(address)") })] }, rule: "OP-054" },
    { name: `${role} calls with value`, role, phase: { calls: [call(other, { from: self, value: 1n })] }, rule: "OP-061" },
    { name: `${role} calls ecrecover`, role, phase: { calls: [call("0x0000000000000000000000000000000000000001", { from: self, code: "none", type: "STATICCALL" })] }, rule: undefined },
    { name: `${role} calls BLS12 pairing (0x0f)`, role, phase: { calls: [call("0x000000000000000000000000000000000000000f", { from: self, code: "none", type: "STATICCALL" })] }, rule: undefined },
    { name: `${role} calls P256 where the chain has none`, role, phase: { calls: [call("0x0000000000000000000000000000000000000100", { from: self, code: "none", type: "STATICCALL" })] }, rule: "OP-062" },
    { name: `${role} calls P256 where the chain has it`, role, p256: true, phase: { calls: [call("0x0000000000000000000000000000000000000100", { from: self, code: "none", type: "STATICCALL" })] }, rule: undefined },
    { name: `${role} calls an unknown precompile`, role, phase: { calls: [call("0x0000000000000000000000000000000000000012", { from: self, code: "none", type: "STATICCALL" })] }, rule: "OP-062" },
    { name: `${role} calls an EIP-7702 account other than the sender`, role, phase: { calls: [call(other, { from: self, code: "delegated" })] }, rule: "AUTH-030" },
    { name: `${role} TIMESTAMP in a nested call is still its own`, role, phase: { opcodes: { TIMESTAMP: 1 }, calls: [call(other, { from: self })] }, rule: "OP-011" },
    // storage
    { name: `${role} reads the account's storage`, role, op, phase: { storage: { [sender]: read(pad("0x01")) } }, rule: undefined },
    { name: `${role} writes the account's associated slot in a token (account exists)`, role, op: role === "factory" ? withFactory : op, phase: { storage: { [token]: write(mappingSlot(sender)) } }, keccak: [mappingInput(sender)], rule: role === "factory" ? "STO-022" : undefined },
    { name: `${role} reads a struct field of the account's mapping entry (+127)`, role, op, phase: { storage: { [token]: read(`0x${(BigInt(mappingSlot(sender)) + 127n).toString(16).padStart(64, "0")}` as Hex) } }, keccak: [mappingInput(sender)], rule: role === "factory" ? "STO-022" : undefined },
    { name: `${role} reads past the associated range (+129)`, role, op: role === "factory" ? withFactory : op, phase: { storage: { [token]: read(`0x${(BigInt(mappingSlot(sender)) + 129n).toString(16).padStart(64, "0")}` as Hex) } }, keccak: [mappingInput(sender)], rule: "STO-033" },
    { name: `unstaked ${role} reads unassociated storage`, role, op, phase: { storage: { [token]: read(pad("0x07")) } }, rule: "STO-033" },
    { name: `staked ${role} reads unassociated storage`, role, op, phase: { storage: { [token]: read(pad("0x07")) } }, stakes: allStaked, rule: undefined },
    { name: `staked ${role} writes unassociated storage`, role, op, phase: { storage: { [token]: write(pad("0x07")) } }, stakes: allStaked, rule: "STO-033" },
    { name: `unstaked ${role} transient read of unassociated storage (OP-070)`, role, op, phase: { transientStorage: { [token]: read(pad("0x07")) } }, rule: "STO-033" },
    ...(role === "account"
      ? []
      : [
          { name: `unstaked ${role} own storage`, role, op, phase: { storage: { [self]: write(pad("0x01")) } }, rule: "STO-031" },
          { name: `staked ${role} own storage`, role, op, phase: { storage: { [self]: write(pad("0x01")) } }, stakes: allStaked, rule: undefined },
          { name: `unstaked ${role} slot associated with itself`, role, op, phase: { storage: { [token]: write(mappingSlot(self, 3n)) } }, keccak: [mappingInput(self, 3n)], rule: "STO-032" },
          { name: `staked ${role} slot associated with itself`, role, op, phase: { storage: { [token]: write(mappingSlot(self, 3n)) } }, keccak: [mappingInput(self, 3n)], stakes: allStaked, rule: undefined },
        ]),
  ];
});

cases.push(
  { name: "new account's associated storage with a staked factory (STO-022)", op: withFactory, role: "account", phase: { storage: { [token]: write(mappingSlot(sender)) } }, keccak: [mappingInput(sender)], stakes: { ...unstaked, factory: true }, rule: undefined },
  { name: "new account's associated storage with an unstaked factory", op: withFactory, role: "account", phase: { storage: { [token]: write(mappingSlot(sender)) } }, keccak: [mappingInput(sender)], rule: "STO-022" },
  { name: "account deposits to itself (depositTo)", role: "account", phase: { calls: [call(entryPoint, { value: 5n, input: depositTo(sender) })] }, rule: undefined },
  { name: "account deposits for another address (OP-052 allows only depositTo(sender))", role: "account", phase: { calls: [call(entryPoint, { value: 5n, input: depositTo(other) })] }, rule: "OP-054" },
  { name: "account calls depositTo with its argument cut short", role: "account", phase: { calls: [call(entryPoint, { input: toFunctionSelector("depositTo(address)") })] }, rule: "OP-054" },
  { name: "factory deposits for the sender it deploys", op: withFactory, role: "factory", phase: { calls: [call(entryPoint, { from: factory, value: 5n, input: depositTo(sender) })] }, rule: undefined },
  { name: "account reads its own EntryPoint balance (balanceOf(sender) is not depositTo)", role: "account", phase: { calls: [call(entryPoint, { input: `${toFunctionSelector("balanceOf(address)")}${pad(sender).slice(2)}` as Hex })] }, rule: "OP-054" },
  { name: "paymaster deposits for the sender", op: withPaymaster, role: "paymaster", phase: { calls: [call(entryPoint, { from: paymaster, value: 5n, input: depositTo(sender) })] }, rule: "OP-054" },
  { name: "factory calls the EntryPoint's fallback", op: withFactory, role: "factory", phase: { calls: [call(entryPoint, { from: factory, value: 5n })] }, rule: "OP-054" },
  { name: "paymaster increments a nonce", op: withPaymaster, role: "paymaster", phase: { calls: [call(entryPoint, { from: paymaster, input: `${toFunctionSelector("incrementNonce(uint192)")}${pad("0x01").slice(2)}` as Hex })] }, rule: "OP-054" },
  { name: "factory EXTCODEHASH of the sender before it has code (OP-042)", op: withFactory, role: "factory", phase: { codeAccesses: [{ opcode: "EXTCODEHASH", from: factory, address: sender, code: "none", thenIszero: false }] }, rule: undefined },
  { name: "paymaster calls the sender while it has no code (OP-042 is the factory's only)", op: withPaymaster, role: "paymaster", phase: { calls: [call(sender, { from: paymaster, code: "none" })] }, rule: "OP-041" },
  { name: "account pays the EntryPoint's fallback with value", role: "account", phase: { calls: [call(entryPoint, { value: 5n })] }, rule: undefined },
  { name: "a helper of the account pays the EntryPoint", role: "account", phase: { calls: [call(entryPoint, { from: other, value: 5n })] }, rule: "OP-054" },
  { name: "paymaster pays the EntryPoint's fallback", role: "paymaster", phase: { calls: [call(entryPoint, { from: paymaster, value: 5n })] }, rule: "OP-054" },
  { name: "account increments its nonce", role: "account", phase: { calls: [call(entryPoint, { input: `${toFunctionSelector("incrementNonce(uint192)")}${pad("0x01").slice(2)}` as Hex })] }, rule: undefined },
  { name: "factory deploys the sender with CREATE2 once", op: withFactory, role: "factory", phase: { creates: [{ opcode: "CREATE2", from: factory, address: sender }] }, rule: undefined },
  { name: "factory calls the sender before it has code (OP-042)", op: withFactory, role: "factory", phase: { calls: [call(sender, { from: factory, code: "none" })] }, rule: undefined },
  { name: "factory CREATE2s twice", op: withFactory, role: "factory", phase: { creates: [{ opcode: "CREATE2", from: factory, address: sender }, { opcode: "CREATE2", from: factory, address: other }] }, rule: "OP-031" },
  { name: "staked factory CREATE2s twice (EREP-060)", op: withFactory, role: "factory", stakes: { ...unstaked, factory: true }, phase: { creates: [{ opcode: "CREATE2", from: factory, address: sender }, { opcode: "CREATE2", from: factory, address: other }] }, rule: undefined },
  { name: "factory CREATE2s something other than the sender", op: withFactory, role: "factory", phase: { creates: [{ opcode: "CREATE2", from: factory, address: other }] }, rule: "OP-031" },
  { name: "account without factory uses CREATE (banned by OP-011 but for OP-032)", role: "account", phase: { creates: [{ opcode: "CREATE", from: sender, address: other }] }, rule: "OP-011" },
  { name: "account without factory uses CREATE2", role: "account", phase: { creates: [{ opcode: "CREATE2", from: sender, address: other }] }, rule: "OP-031" },
  { name: "account with an unstaked factory uses CREATE (OP-032)", op: withFactory, role: "account", phase: { creates: [{ opcode: "CREATE", from: sender, address: other }] }, rule: undefined },
  { name: "account with an unstaked factory uses CREATE2", op: withFactory, role: "account", phase: { creates: [{ opcode: "CREATE2", from: sender, address: other }] }, rule: "OP-031" },
  { name: "account with a staked factory uses CREATE2 (EREP-060)", op: withFactory, role: "account", stakes: { ...unstaked, factory: true }, phase: { creates: [{ opcode: "CREATE2", from: sender, address: other }] }, rule: undefined },
  { name: "account's helper CREATEs, staked factory", op: withFactory, role: "account", stakes: { ...unstaked, factory: true }, phase: { creates: [{ opcode: "CREATE", from: other, address: token }] }, rule: "OP-011" },
  { name: "staked factory's helper CREATEs (EREP-061)", op: withFactory, role: "factory", stakes: { ...unstaked, factory: true }, phase: { creates: [{ opcode: "CREATE2", from: factory, address: sender }, { opcode: "CREATE", from: other, address: token }] }, rule: undefined },
  { name: "paymaster uses CREATE", op: withPaymaster, role: "paymaster", stakes: allStaked, phase: { creates: [{ opcode: "CREATE", from: paymaster, address: other }] }, rule: "OP-011" },
  { name: "unstaked factory uses CREATE", op: withFactory, role: "factory", phase: { creates: [{ opcode: "CREATE2", from: factory, address: sender }, { opcode: "CREATE", from: factory, address: other }] }, rule: "OP-011" },
  { name: "staked factory uses CREATE (EREP-060)", op: withFactory, role: "factory", stakes: { ...unstaked, factory: true }, phase: { creates: [{ opcode: "CREATE", from: factory, address: other }, { opcode: "CREATE2", from: factory, address: sender }] }, rule: undefined },
  { name: "unstaked factory's helper CREATEs", op: withFactory, role: "factory", phase: { creates: [{ opcode: "CREATE2", from: factory, address: sender }, { opcode: "CREATE", from: other, address: token }] }, rule: "OP-011" },
);

describe("checkValidationRules", () => {
  it.each(cases)("$name → $rule", ({ op, role, phase: fields, stakes, keccak, rule, p256 }) => {
    const trace: ValidationTrace = { phases: [phase(role, fields)], keccakInputs: keccak ?? [], codeHashes: {} };
    const violations = checkValidationRules({ op: op ?? opFor(role), entryPoint, senderCreator, trace, stakes: stakes ?? unstaked, p256Precompile: p256 });
    expect(violations.map((v) => v.rule)).toEqual(rule ? [rule] : []);
    for (const v of violations) expect(v.entity).toBe(role);
  });

  it("names the entity, its address, the subject and the rule", () => {
    const trace: ValidationTrace = { phases: [phase("factory", { opcodes: { TIMESTAMP: 1 } })], keccakInputs: [], codeHashes: {} };
    const [violation] = checkValidationRules({ op: withFactory, entryPoint, senderCreator, trace, stakes: unstaked });
    expect(describeViolation(violation!)).toBe(`factory ${getAddress(factory)} uses banned opcode TIMESTAMP (OP-011)`);
  });

  it("ignores the EntryPoint's own calls to itself and its own storage", () => {
    const trace: ValidationTrace = {
      phases: [{ ...phase("account", { storage: { [entryPoint]: write(mappingSlot(sender)) } }) }, { ...phase("account"), to: entryPoint, opcodes: { NUMBER: 3 } }],
      keccakInputs: [],
      codeHashes: {},
    };
    expect(checkValidationRules({ op: baseOp, entryPoint, senderCreator, trace, stakes: unstaked })).toEqual([]);
  });
});
