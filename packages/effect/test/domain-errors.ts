import * as core from "@bundlekit/core";
import type { Address, Hash } from "viem";

export const address: Address = "0x00000000000000000000000000000000000000Aa";
export const hash: Hash = `0x${"ab".repeat(32)}`;
const violation = {
  rule: "OP-011",
  entity: "factory",
  address,
  subject: "uses banned opcode TIMESTAMP",
};

/** One domain error of each kind: a kind added without an example here fails type-check. */
export const examples: { [K in core.DomainErrorKind]: Extract<core.DomainError, { kind: K }> } = {
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

