import { decodeErrorResult, type Hex } from "viem";
import { ExecutionRevertedError } from "../errors/errors.ts";
import type { EntryPoint } from "../entrypoint/registry.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import type { UserOperation } from "../userop/types.ts";
import { isUserOperationV06 } from "../userop/types.ts";
import { mergeStateOverrides, type StateOverride } from "../validation/state-override.ts";
import { simulateHandleOp, simulateValidation } from "../validation/simulate.ts";
import type { FeeOracle } from "./fee-oracle.ts";
import { calculatePreVerificationGas, type PreVerificationGasConfig } from "./pre-verification-gas.ts";

/** Gas values for an operation, as `eth_estimateUserOperationGas` returns them. */
export interface GasEstimate {
  preVerificationGas: bigint;
  verificationGasLimit: bigint;
  callGasLimit: bigint;
  /** v0.7+ with a paymaster only. */
  paymasterVerificationGasLimit?: bigint | undefined;
  paymasterPostOpGasLimit?: bigint | undefined;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

export interface EstimateContext {
  client: ChainClient;
  feeOracle: FeeOracle;
  /** Upper bound for verification gas in simulation (`validationGasLimit`). */
  validationGasLimit: bigint;
  /** Upper bound for call gas in simulation. */
  executionGasLimit: bigint;
  /** Percent added to verification and call gas. */
  gasLimitMarkupPercent: bigint;
  /** Gas added to verification and call gas (`estimationStaticBuffer`). */
  staticBuffer: bigint;
  /** Percent added to preVerificationGas (`pvgMarkup`). */
  pvgMarkupPercent: bigint;
  preVerificationGas?: PreVerificationGasConfig | undefined;
  /** Simulate on top of these overrides (e.g. a queued nonce). */
  stateOverride?: StateOverride | undefined;
}

/** A well-formed 65-byte ECDSA signature for accounts that recover a signer while estimating. */
export const dummySignature: Hex = `0x${"f".repeat(31)}0${"0".repeat(32)}7${"a".repeat(63)}1c`; // r ‖ s ‖ v: 32 + 32 + 1 bytes

const balanceForEstimation = 10n ** 24n;

/**
 * Estimate the gas limits of an operation by simulation. Validation runs with generous limits
 * and a fee of 1 wei (so the amount paid equals the gas used) on a sender whose balance is
 * topped up, then:
 * - verificationGasLimit: gas used before execution, with markup and buffer;
 * - callGasLimit: execution gas from `simulateHandleOp`, with the unused-gas penalty of v0.7+
 *   taken back out;
 * - preVerificationGas: from the calldata the filled-in operation will really occupy.
 */
export async function estimateUserOperationGas(
  context: EstimateContext,
  entryPoint: EntryPoint,
  op: UserOperation,
): Promise<GasEstimate> {
  const { client } = context;
  const [fees, balance] = await Promise.all([context.feeOracle.getGasPrice(), client.getBalance({ address: op.sender })]);
  const probe = {
    ...op,
    verificationGasLimit: context.validationGasLimit,
    callGasLimit: context.executionGasLimit,
    preVerificationGas: 0n,
    maxFeePerGas: 1n,
    maxPriorityFeePerGas: 1n,
    signature: op.signature === "0x" ? dummySignature : op.signature,
  } as UserOperation;
  if (!isUserOperationV06(probe) && probe.paymaster) {
    probe.paymasterVerificationGasLimit = context.validationGasLimit;
    probe.paymasterPostOpGasLimit ||= 0n;
  }
  // The sender can always pay in estimation: its balance (as overridden, if it is) topped up.
  const senderOverride = context.stateOverride?.[op.sender];
  const senderBalance = senderOverride?.balance !== undefined ? BigInt(senderOverride.balance) : balance;
  const stateOverride = mergeStateOverrides(context.stateOverride, {
    [op.sender]: { balance: `0x${(senderBalance + balanceForEstimation).toString(16)}` as Hex },
  });

  const [validation, execution] = await Promise.all([
    simulateValidation(client, entryPoint, probe, { stateOverride }),
    simulateHandleOp(client, entryPoint, probe, { stateOverride }),
    assertExecutionSucceeds(context, entryPoint, probe, stateOverride),
  ]);

  const verificationGasUsed = validation.preOpGas;
  const executionGasUsed = executionGas(entryPoint, execution.paid - execution.preOpGas, probe.callGasLimit);
  const withMargin = (gas: bigint) => (gas * (100n + context.gasLimitMarkupPercent)) / 100n + context.staticBuffer;

  const estimate: GasEstimate = {
    preVerificationGas: 0n,
    verificationGasLimit: withMargin(verificationGasUsed),
    callGasLimit: withMargin(executionGasUsed),
    maxFeePerGas: op.maxFeePerGas || fees.maxFeePerGas,
    maxPriorityFeePerGas: op.maxPriorityFeePerGas || fees.maxPriorityFeePerGas,
  };
  if (!isUserOperationV06(op) && op.paymaster) {
    estimate.paymasterVerificationGasLimit = estimate.verificationGasLimit;
    estimate.paymasterPostOpGasLimit = op.paymasterPostOpGasLimit ?? 0n;
  }
  // preVerificationGas depends on the calldata of the operation as it will be sent.
  const filled = {
    ...probe,
    ...estimate,
    signature: probe.signature,
    preVerificationGas: op.preVerificationGas || 100_000n,
  } as UserOperation;
  const pvg = calculatePreVerificationGas(filled, verificationGasUsed, context.preVerificationGas);
  estimate.preVerificationGas = (pvg * (100n + context.pvgMarkupPercent)) / 100n;
  return estimate;
}

/** `executeUserOp(PackedUserOperation,bytes32)`: v0.7+ hand such callData to the account with the op itself. */
const executeUserOpSelector = "0x8dd7712f";

/**
 * The EntryPoint swallows a reverting execution (the operation is still paid for), so estimation
 * asks separately: the same operation with empty callData, then the EntryPoint calls the account
 * with the real callData as the target of `simulateHandleOp`. A revert there is the operation's own
 * and becomes `ExecutionRevertedError` (-32521) with its reason.
 */
async function assertExecutionSucceeds(context: EstimateContext, entryPoint: EntryPoint, probe: UserOperation, stateOverride: StateOverride | undefined) {
  if (probe.callData === "0x" || probe.callData.startsWith(executeUserOpSelector)) return;
  const result = await simulateHandleOp(context.client, entryPoint, { ...probe, callData: "0x" }, {
    stateOverride,
    target: { address: probe.sender, data: probe.callData },
  });
  if (result.targetSuccess) return;
  throw new ExecutionRevertedError(result.targetResult, revertReason(result.targetResult));
}

/** The message of an `Error(string)` or `Panic(uint256)` revert, if it is one. */
function revertReason(data: Hex): string | undefined {
  try {
    const { errorName, args } = decodeErrorResult({ abi: [], data });
    return errorName === "Error" ? String(args?.[0]) : `${errorName}(${(args ?? []).join(", ")})`;
  } catch {
    return undefined;
  }
}

/**
 * Gas the execution phase used, from `paid - preOpGas` at a price of 1 wei. v0.7+ add a penalty
 * of 10% of the unused call gas (v0.8 only above 40,000 unused), so with limit L the measured
 * X = used + (L - used) / 10, i.e. used = (10X - L) / 9.
 */
function executionGas(entryPoint: EntryPoint, measured: bigint, limit: bigint): bigint {
  if (entryPoint.version === "0.6") return measured;
  const used = (10n * measured - limit) / 9n;
  if (entryPoint.version === "0.8" && limit - used <= 40_000n) return measured;
  return used > 0n ? used : measured;
}
