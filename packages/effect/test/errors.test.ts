import {
  BundleGasTooLargeError,
  BusyError,
  type DomainError,
  type DomainErrorKind,
  DuplicateUserOperationError,
  EntityLimitError,
  EntryPointRejectionError,
  ExecutionRevertedError,
  FeeBelowBaseFeeError,
  GasLimitTooHighError,
  GasPriceTooLowError,
  InfrastructureError,
  InvalidAuthorizationError,
  InvalidParamsError,
  MempoolRejectionError,
  OutOfTimeRangeError,
  PaymasterDepositError,
  PaymasterRejectionError,
  PreVerificationGasTooLowError,
  PriorityFeeAboveMaxFeeError,
  ProposalNotOpenError,
  ReplacementUnderpricedError,
  ReputationError,
  RpcError,
  RuleViolationError,
  SenderLimitError,
  ShuttingDownError,
  SignatureInvalidError,
  StakeTooLowError,
  TraceIncompleteError,
  UnsupportedAggregatorError,
  UnsupportedEntryPointError,
  UserOperationTooLargeError,
} from "@bundlekit/core";
import type { Address, Hash } from "viem";
import { describe, expect, it } from "vitest";
import { toBundlekitError } from "../src/errors.ts";

const address: Address = "0x00000000000000000000000000000000000000Aa";
const hash: Hash = `0x${"ab".repeat(32)}`;
const violation = {
  rule: "OP-011",
  entity: "factory",
  address,
  subject: "uses banned opcode TIMESTAMP",
};

/** One domain error of each kind: a kind added without an example here fails type-check. */
const examples: { [K in DomainErrorKind]: Extract<DomainError, { kind: K }> } = {
  invalidParams: new InvalidParamsError("params[0].nonce", "is required"),
  unsupportedEntryPoint: new UnsupportedEntryPointError(address, [address]),
  priorityFeeAboveMaxFee: new PriorityFeeAboveMaxFeeError(2n, 1n),
  gasLimitTooHigh: new GasLimitTooHighError("verificationGasLimit", 2n, 1n),
  userOperationTooLarge: new UserOperationTooLargeError(9000, 8192),
  bundleGasTooLarge: new BundleGasTooLargeError(2n, 1n),
  feeBelowBaseFee: new FeeBelowBaseFeeError(1n, 2n),
  gasPriceTooLow: new GasPriceTooLowError("maxFeePerGas", 1n, 2n, 3n, 10),
  preVerificationGasTooLow: new PreVerificationGasTooLowError(1n, 2n, 0n),
  invalidAuthorization: new InvalidAuthorizationError("eip7702Auth", "is for chain 1, not 2"),
  proposalNotOpen: new ProposalNotOpenError("p1"),
  entryPointRejected: new EntryPointRejectionError("AA21 didn't pay prefund"),
  paymasterRejected: new PaymasterRejectionError("AA33 reverted", { paymaster: address }),
  signatureInvalid: new SignatureInvalidError("AA24 signature error"),
  outOfTimeRange: new OutOfTimeRangeError("AA22 expired or not due"),
  paymasterDepositTooLow: new PaymasterDepositError("AA31 paymaster deposit too low"),
  unsupportedAggregator: new UnsupportedAggregatorError("account", address),
  executionReverted: new ExecutionRevertedError("0x", "boom"),
  duplicateUserOperation: new DuplicateUserOperationError(hash),
  mempoolRejected: new MempoolRejectionError("no"),
  replacementUnderpriced: new ReplacementUnderpricedError(hash, 2n, 1n),
  throttledOrBanned: new ReputationError("paymaster", address, "banned"),
  senderLimit: new SenderLimitError(address, 4),
  entityLimit: new EntityLimitError("paymaster", address, 10),
  ruleViolation: new RuleViolationError([violation]),
  stakeTooLow: new StakeTooLowError(
    {
      entity: "factory",
      address,
      stake: 1n,
      unstakeDelaySec: 1n,
      minStake: 2n,
      minUnstakeDelay: 2,
    },
    [violation],
  ),
  traceIncomplete: new TraceIncompleteError([address]),
  infrastructure: new InfrastructureError("the node did not answer"),
  busy: new BusyError(2, 1),
  shuttingDown: new ShuttingDownError(),
};

describe("toBundlekitError: one tag per domain error", () => {
  it("gives every domain error a tag of its own", () => {
    const tags = Object.values(examples).map((error) => toBundlekitError(error)._tag);
    expect(new Set(tags).size).toBe(tags.length);
  });

  it("tells apart failures that share a wire code: a fee below the base fee, a duplicate and a malformed field are all -32602", () => {
    const fee = toBundlekitError(examples.feeBelowBaseFee);
    const duplicate = toBundlekitError(examples.duplicateUserOperation);
    const malformed = toBundlekitError(examples.invalidParams);
    expect([fee._tag, duplicate._tag, malformed._tag]).toEqual([
      "FeeBelowBaseFee",
      "DuplicateUserOperation",
      "InvalidParams",
    ]);
    expect([fee.code, duplicate.code, malformed.code]).toEqual([-32602, -32602, -32602]);
  });

  it("tells apart a banned entity, a full sender and a full paymaster, all -32504", () => {
    const tags = [examples.throttledOrBanned, examples.senderLimit, examples.entityLimit].map(
      (error) => toBundlekitError(error),
    );
    expect(tags.map((t) => [t._tag, t.code])).toEqual([
      ["ThrottledOrBanned", -32504],
      ["SenderLimit", -32504],
      ["EntityLimit", -32504],
    ]);
  });

  it("carries the domain error's facts with its wire code, message and data", () => {
    expect(toBundlekitError(examples.feeBelowBaseFee)).toMatchObject({
      _tag: "FeeBelowBaseFee",
      maxFeePerGas: 1n,
      baseFeePerGas: 2n,
      code: -32602,
      message: "invalid maxFeePerGas: 1 is below the current base fee 2",
      data: { field: "maxFeePerGas", reason: "1 is below the current base fee 2" },
    });
    expect(toBundlekitError(examples.paymasterRejected)).toMatchObject({
      _tag: "PaymasterRejected",
      paymaster: address,
      failure: { code: 33, entity: "paymaster" },
      code: -32501,
      data: { reason: "AA33 reverted", paymaster: address },
    });
  });

  it("keeps the node's failure and anything unknown as InternalError, and a method not served as MethodNotFound", () => {
    expect(toBundlekitError(examples.infrastructure)).toMatchObject({
      _tag: "InternalError",
      code: -32603,
      message: "the node did not answer",
    });
    expect(toBundlekitError(new Error("boom"))).toMatchObject({
      _tag: "InternalError",
      code: -32603,
      message: "boom",
    });
    expect(toBundlekitError(new RpcError(-32601, "no such method"))).toMatchObject({
      _tag: "MethodNotFound",
      code: -32601,
    });
  });
});
