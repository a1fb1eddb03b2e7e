import type { Hex } from "viem";
import type { EntryPoint } from "../entrypoint/registry.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import type { UserOperation } from "../userop/types.ts";
import { isUserOperationV06 } from "../userop/types.ts";
import { maxOf } from "../utils/bigint-math.ts";
import { ethCall } from "../validation/eth-call.ts";
import { decodeValidationResult, validationCall } from "../validation/simulate.ts";
import { mergeStateOverrides } from "../validation/state-override.ts";
import type { StateOverride } from "../ports/eth-call.ts";
import { toQuantity } from "../userop/wire.ts";
import type { FeeOracle } from "./fee-oracle.ts";
import type { GasSettings } from "./gas-settings.ts";
import { calculatePreVerificationGas, type PreVerificationGasConfig } from "../userop/pre-verification-gas.ts";
import { searchGasLimits } from "./search-gas-limits.ts";

/** Gas values for an operation, as `eth_estimateUserOperationGas` returns them. */
export interface GasEstimate {
  preVerificationGas: bigint;
  verificationGasLimit: bigint;
  callGasLimit: bigint;
  /** v0.7+ only (v0.6 has no such field): 0 without a paymaster. */
  paymasterVerificationGasLimit?: bigint | undefined;
  /** v0.7+ only: 0 without a paymaster, or when its validation returns no context. */
  paymasterPostOpGasLimit?: bigint | undefined;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

export interface EstimateContext {
  client: ChainClient;
  feeOracle: FeeOracle;
  /**
   * The search's ceilings (`validationGasLimit` for verification, `executionGasLimit` for call and
   * postOp) and the margins added to what it finds.
   */
  settings: Pick<GasSettings, "validationGasLimit" | "executionGasLimit" | "estimationStaticBuffer" | "estimationMarkupPercent" | "preVerificationGasMarkupPercent">;
  preVerificationGas?: PreVerificationGasConfig | undefined;
  /** preVerificationGas an L2 requires on top, for the operation's L1 data fee (`L1DataCost`); none on L1. */
  l1DataGas?: ((op: UserOperation) => Promise<bigint>) | undefined;
  /** Simulate on top of these overrides (e.g. a queued nonce, a caller's override). */
  stateOverride?: StateOverride | undefined;
}

/** A well-formed 65-byte ECDSA signature for accounts that recover a signer while estimating. */
export const dummySignature: Hex = `0x${"f".repeat(31)}0${"0".repeat(32)}7${"a".repeat(63)}1c`; // r ‖ s ‖ v: 32 + 32 + 1 bytes

/**
 * Estimate an operation's gas limits: for each phase (verification, call, paymaster
 * verification, postOp) the smallest limit at which it still succeeds, found by search on the
 * node (`searchGasLimits`), plus the configured markup; then a final simulation at the returned
 * limits confirms them. The sender's balance is topped up by exactly the prefund it pays, so its
 * call sees its own balance and no revert is hidden: a call that reverts answers -32521 with its
 * reason. preVerificationGas comes from the calldata the filled-in operation will occupy. Last,
 * the operation as estimated is validated on the sender's own balance: an account that cannot
 * pay its prefund gets the EntryPoint's AA21 (a caller's state override may give it the balance).
 */
export async function estimateUserOperationGas(
  context: EstimateContext,
  entryPoint: EntryPoint,
  op: UserOperation,
): Promise<GasEstimate> {
  const [balance, fees] = await Promise.all([senderBalance(context, op), context.feeOracle.getGasPrice()]);
  const probe = {
    ...op,
    verificationGasLimit: context.settings.validationGasLimit,
    callGasLimit: context.settings.executionGasLimit,
    preVerificationGas: 0n,
    // Paying the prefund is part of validation (unless the account's deposit covers it): search
    // at the fees the operation will carry.
    maxFeePerGas: op.maxFeePerGas || fees.maxFeePerGas,
    maxPriorityFeePerGas: op.maxFeePerGas ? op.maxPriorityFeePerGas : fees.maxPriorityFeePerGas,
    signature: op.signature === "0x" ? dummySignature : op.signature,
  } as UserOperation;
  if (!isUserOperationV06(probe) && probe.paymaster) {
    probe.paymasterVerificationGasLimit = context.settings.validationGasLimit;
    probe.paymasterPostOpGasLimit = context.settings.executionGasLimit;
  }
  // The sender gets exactly the prefund it pays at the search's limits, so its call sees its own
  // balance: a call that spends more than the account holds still reverts.
  const stateOverride = mergeStateOverrides(context.stateOverride, {
    [op.sender]: { balance: toQuantity(balance + requiredPrefund(probe)) },
  });
  const search = { client: context.client, entryPoint, stateOverride };
  const found = await searchGasLimits({ ...search, userOperation: probe });

  const { estimationMarkupPercent, estimationStaticBuffer, preVerificationGasMarkupPercent } = context.settings;
  const withMargin = (gas: bigint) => gas + (gas * BigInt(estimationMarkupPercent)) / 100n + estimationStaticBuffer;
  const limits = {
    // v0.6 runs postOp within verificationGasLimit.
    verificationGasLimit: withMargin(isUserOperationV06(op) ? maxOf(found.verificationGasLimit, found.paymasterPostOpGas ?? 0n) : found.verificationGasLimit),
    callGasLimit: withMargin(found.callGasLimit),
  };
  const paymasterLimits = isUserOperationV06(op)
    ? {}
    : op.paymaster
      ? {
          paymasterVerificationGasLimit: withMargin(found.paymasterVerificationGasLimit ?? 0n),
          paymasterPostOpGasLimit: found.paymasterPostOpGas === undefined ? 0n : withMargin(found.paymasterPostOpGas),
        }
      : // Clients read both fields on v0.7+; without a paymaster they are 0, as peers answer.
        { paymasterVerificationGasLimit: 0n, paymasterPostOpGasLimit: 0n };
  const estimate: GasEstimate = {
    preVerificationGas: 0n,
    ...limits,
    ...paymasterLimits,
    maxFeePerGas: op.maxFeePerGas || fees.maxFeePerGas,
    maxPriorityFeePerGas: op.maxPriorityFeePerGas || fees.maxPriorityFeePerGas,
  };
  // preVerificationGas depends on the calldata of the operation as it will be sent.
  const filled = {
    ...probe,
    ...estimate,
    signature: probe.signature,
    preVerificationGas: op.preVerificationGas || 100_000n,
  } as UserOperation;
  const l1DataGas = (await context.l1DataGas?.(filled)) ?? 0n;
  const preVerificationGasAt = (verificationGasUsed: bigint) => {
    const pvg = calculatePreVerificationGas(filled, verificationGasUsed, entryPoint.version, context.preVerificationGas) + l1DataGas;
    return (pvg * (100n + BigInt(preVerificationGasMarkupPercent))) / 100n;
  };
  // The searches ran on a topped-up balance; the operation as estimated must validate on the
  // sender's own (a caller's override counts): one that cannot pay its prefund is the
  // EntryPoint's AA21, as peers answer, not an estimate that fails at send.
  const validatesOnOwnBalance = async (preVerificationGas: bigint) => {
    const estimated = { ...filled, preVerificationGas } as UserOperation;
    decodeValidationResult(entryPoint, estimated, await ethCall(context.client, validationCall(entryPoint, estimated, context.stateOverride)));
  };
  // The most preVerificationGas the operation can get (none of its verification gas counted:
  // under EIP-7623's floor it shrinks as that grows): what pays that prefund pays the smaller one.
  const upperBound = preVerificationGasAt(0n);

  // Usually one run confirms the limits and checks the prefund at once: the operation as
  // estimated, at that bound, on the sender's own balance, reading its EntryPoint deposit.
  const atBound = await searchGasLimits({ client: context.client, entryPoint, stateOverride: context.stateOverride, userOperation: { ...filled, preVerificationGas: upperBound } as UserOperation, exact: true, depositOf: op.sender }).catch(() => undefined);
  if (atBound) {
    const preVerificationGas = preVerificationGasAt(atBound.verificationGasUsed);
    // Unless the deposit covers the exact prefund but not the bound's: the sender paid in that run
    // and will not on chain, so its verification gas there is more than the operation's.
    const pays = (pvg: bigint) => (atBound.deposit ?? 0n) < requiredPrefund({ ...filled, preVerificationGas: pvg } as UserOperation);
    if (pays(upperBound) === pays(preVerificationGas)) {
      estimate.preVerificationGas = preVerificationGas;
      return estimate;
    }
  }
  // Otherwise (it failed, or paid what the sender will not): confirm the limits on the topped-up
  // balance and, beside it, check the prefund at the bound; at the exact figure only if that fails.
  const [confirmation, ownBalance] = await Promise.allSettled([
    searchGasLimits({ ...search, userOperation: { ...probe, ...limits, ...paymasterLimits } as UserOperation, exact: true }),
    validatesOnOwnBalance(upperBound),
  ]);
  if (confirmation.status === "rejected") throw confirmation.reason;
  // Verification gas as used at the returned limits: under the EIP-7623 floor, preVerificationGas
  // shrinks as it grows. The search's own runs can use more (the account pays a larger prefund
  // there, where its EntryPoint deposit might cover the real one), which would leave it short.
  estimate.preVerificationGas = preVerificationGasAt(confirmation.value.verificationGasUsed);
  if (ownBalance.status === "rejected") await validatesOnOwnBalance(estimate.preVerificationGas);
  return estimate;
}

/** The sender's balance as the simulation sees it: a caller's override, else the chain's. */
async function senderBalance(context: EstimateContext, op: UserOperation): Promise<bigint> {
  const overridden = context.stateOverride?.[op.sender]?.balance;
  return overridden !== undefined ? BigInt(overridden) : context.client.getBalance({ address: op.sender });
}

/** What the EntryPoint charges the account up front (nothing when a paymaster pays). */
function requiredPrefund(op: UserOperation): bigint {
  if (isUserOperationV06(op)) {
    if (op.paymasterAndData !== "0x") return 0n;
    return (op.callGasLimit + op.verificationGasLimit + op.preVerificationGas) * op.maxFeePerGas;
  }
  if (op.paymaster) return 0n;
  return (op.callGasLimit + op.verificationGasLimit + op.preVerificationGas) * op.maxFeePerGas;
}
