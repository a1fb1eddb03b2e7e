import * as core from "@bundlekit/core";
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
const examples: { [K in core.DomainErrorKind]: Extract<core.DomainError, { kind: K }> } = {
  invalidParams: new core.InvalidParamsError("params[0].nonce", "is required"),
  unsupportedEntryPoint: new core.UnsupportedEntryPointError(address, [address]),
  priorityFeeAboveMaxFee: new core.PriorityFeeAboveMaxFeeError(2n, 1n),
  gasLimitTooHigh: new core.GasLimitTooHighError("verificationGasLimit", 2n, 1n),
  userOperationTooLarge: new core.UserOperationTooLargeError(9000, 8192),
  bundleGasTooLarge: new core.BundleGasTooLargeError(2n, 1n),
  feeBelowBaseFee: new core.FeeBelowBaseFeeError(1n, 2n),
  gasPriceTooLow: new core.GasPriceTooLowError("maxFeePerGas", 1n, 2n, 3n, 10),
  preVerificationGasTooLow: new core.PreVerificationGasTooLowError(1n, 2n, 0n),
  invalidAuthorization: new core.InvalidAuthorizationError("eip7702Auth", "is for chain 1, not 2"),
  proposalNotOpen: new core.ProposalNotOpenError("p1"),
  entryPointRejected: new core.EntryPointRejectionError("AA21 didn't pay prefund"),
  paymasterRejected: new core.PaymasterRejectionError("AA33 reverted", { paymaster: address }),
  signatureInvalid: new core.SignatureInvalidError("AA24 signature error"),
  outOfTimeRange: new core.OutOfTimeRangeError("AA22 expired or not due"),
  paymasterDepositTooLow: new core.PaymasterDepositError("AA31 paymaster deposit too low"),
  unsupportedAggregator: new core.UnsupportedAggregatorError("account", address),
  executionReverted: new core.ExecutionRevertedError("0x", "boom"),
  duplicateUserOperation: new core.DuplicateUserOperationError(hash),
  mempoolRejected: new core.MempoolRejectionError("no"),
  replacementUnderpriced: new core.ReplacementUnderpricedError(hash, 2n, 1n),
  throttledOrBanned: new core.ReputationError("paymaster", address, "banned"),
  senderLimit: new core.SenderLimitError(address, 4),
  entityLimit: new core.EntityLimitError("paymaster", address, 10),
  ruleViolation: new core.RuleViolationError([violation]),
  stakeTooLow: new core.StakeTooLowError(
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
  traceIncomplete: new core.TraceIncompleteError([address]),
  infrastructure: new core.InfrastructureError("the node did not answer"),
  busy: new core.BusyError(2, 1),
  shuttingDown: new core.ShuttingDownError(),
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
    expect(toBundlekitError(new core.RpcError(-32601, "no such method"))).toMatchObject({
      _tag: "MethodNotFound",
      code: -32601,
    });
  });
});
