import { type Address, getAddress, type Hex, parseEther, toFunctionSelector } from "viem";
import { describe, expect, it } from "vitest";
import { RpcErrorCode, toRpcError } from "../../rpc/rpc-errors.ts";
import type { UserOperationV07 } from "../../userop/types.ts";
import type { StakeInfo } from "../../ports/validation-result.ts";
import type { PhaseTrace, ValidationTrace } from "../../ports/validation-trace.ts";
import { checkValidationRules } from "./check-validation-rules.ts";
import { ruleRefusal } from "./stake-refusal.ts";

/**
 * The refusal for broken rules as a pure function of the violations and the stakes the EntryPoint
 * reported: the creation rules, which the anvil tests (stake-errors.test.ts) cannot reach with the
 * probes, and which entity a -32505 names.
 */
const entryPoint: Address = "0x0000000071727de22e5e9d8baf0edac6f37da032";
const senderCreator: Address = "0xefc2c1444ebcc4db75e7613d20c6a62ff67a167c";
const sender: Address = "0x1111111111111111111111111111111111111111";
const factory: Address = "0x2222222222222222222222222222222222222222";
const other: Address = "0x5555555555555555555555555555555555555555";

const op: UserOperationV07 = {
  sender,
  nonce: 0n,
  factory,
  factoryData: "0x",
  callData: "0x",
  callGasLimit: 100_000n,
  verificationGasLimit: 500_000n,
  preVerificationGas: 50_000n,
  maxFeePerGas: 1n,
  maxPriorityFeePerGas: 1n,
  signature: "0x01",
};

const requirement = { minStake: parseEther("1"), minUnstakeDelaySeconds: 86_400 };
const none: StakeInfo = { stake: 0n, unstakeDelaySec: 0n };
const short: StakeInfo = { stake: parseEther("1"), unstakeDelaySec: 60n };

function phase(role: "factory" | "account", creates: PhaseTrace["creates"]): PhaseTrace {
  const target =
    role === "factory"
      ? { to: senderCreator, selector: toFunctionSelector("createSender(bytes)") as Hex }
      : { to: sender, selector: "0x19822f7c" as Hex };
  return {
    ...target,
    opcodes: {},
    storage: {},
    transientStorage: {},
    calls: [],
    codeAccesses: [],
    creates,
    outOfGas: false,
  };
}

/** The error for a trace of `phases`, the factory's stake being `factoryStake`. */
function refusal(phases: PhaseTrace[], factoryStake: StakeInfo) {
  const trace: ValidationTrace = { phases, keccakInputs: [], codeHashes: {} };
  const stakes = { account: false, factory: false, paymaster: false };
  const violations = checkValidationRules({ op, entryPoint, senderCreator, trace, stakes });
  // What the refusal answers on the wire.
  return toRpcError(
    ruleRefusal(violations, { sender: none, factory: factoryStake, paymasterStake: none }, requirement),
  );
}

describe("ruleRefusal", () => {
  it("names the factory short of the unstake delay when it CREATE2s a second contract (OP-031, EREP-060)", () => {
    const creates = [
      { opcode: "CREATE2" as const, from: factory, address: sender },
      { opcode: "CREATE2" as const, from: factory, address: other },
    ];
    const error = refusal([phase("factory", creates)], short);
    expect(error.code).toBe(RpcErrorCode.stakeTooLow);
    expect(error.message).toBe(
      `factory ${getAddress(factory)} unstake delay 60 s is below the minimum 86400 s: factory ${getAddress(factory)} uses banned opcode CREATE2 (OP-031)`,
    );
    expect(error.data).toMatchObject({
      factory: getAddress(factory),
      stake: "0xde0b6b3a7640000",
      unstakeDelaySec: "0x3c",
      minimumUnstakeDelay: "0x15180",
    });
  });

  it("names the factory when the account it deploys uses CREATE2 (EREP-060)", () => {
    const error = refusal(
      [phase("account", [{ opcode: "CREATE2", from: sender, address: other }])],
      short,
    );
    expect(error.code).toBe(RpcErrorCode.stakeTooLow);
    expect(error.data).toMatchObject({
      factory: getAddress(factory),
      rule: "OP-031",
      violations: [{ entity: "account", address: getAddress(sender) }],
    });
  });

  it("keeps -32502 for a CREATE by the account's helper, which no stake allows, whatever the factory's stake", () => {
    const error = refusal(
      [phase("account", [{ opcode: "CREATE", from: other, address: other }])],
      short,
    );
    expect(error.code).toBe(RpcErrorCode.opcodeOrStorageRule);
  });

  it("keeps -32502 when the factory has no stake at all", () => {
    const creates = [
      { opcode: "CREATE2" as const, from: factory, address: sender },
      { opcode: "CREATE2" as const, from: factory, address: other },
    ];
    expect(refusal([phase("factory", creates)], none).code).toBe(RpcErrorCode.opcodeOrStorageRule);
  });
});
