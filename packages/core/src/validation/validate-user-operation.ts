import type { EntryPoint } from "../entrypoint/registry.ts";
import { BundlerError, EntryPointRejectionError, InvalidParamsError, RpcErrorCode } from "../errors/errors.ts";
import { calculatePreVerificationGas, type PreVerificationGasConfig } from "../gas/pre-verification-gas.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import type { UserOperation } from "../userop/types.ts";
import type { StateOverride } from "./state-override.ts";
import { simulateValidation, type ValidationResult } from "./simulate.ts";

export interface ValidateContext {
  client: ChainClient;
  /** Seconds since the epoch. */
  nowSeconds: bigint;
  /** An operation must stay valid at least this long to be worth bundling. Default 30 s. */
  minValiditySeconds?: bigint;
  preVerificationGas?: PreVerificationGasConfig | undefined;
  /** Simulate on top of these overrides (e.g. a queued nonce). */
  stateOverride?: StateOverride | undefined;
}

/**
 * Stages 2 and 3 of validation: simulate on the node, then check what simulation reported —
 * signature, validity window, aggregator and the preVerificationGas the calldata needs.
 */
export async function validateUserOperation(
  context: ValidateContext,
  entryPoint: EntryPoint,
  op: UserOperation,
): Promise<ValidationResult> {
  const result = await simulateValidation(context.client, entryPoint, op, { stateOverride: context.stateOverride });
  const minValidity = context.minValiditySeconds ?? 30n;
  for (const [entity, data] of [["account", result.account], ["paymaster", result.paymaster]] as const) {
    if (!data) continue;
    if (data.signatureFailed) {
      throw new EntryPointRejectionError(entity === "account" ? "AA24 signature error" : "AA34 signature error");
    }
    if (data.aggregator !== "0x0000000000000000000000000000000000000000" && !data.signatureFailed) {
      throw new BundlerError(RpcErrorCode.entryPointRejected, `${entity} requires aggregator ${data.aggregator}, which this bundler does not support`, {
        aggregator: data.aggregator,
      });
    }
    if (data.validUntil < context.nowSeconds + minValidity) {
      throw new BundlerError(RpcErrorCode.outOfTimeRange, `${entity} validity expires at ${data.validUntil}, too soon to bundle`, {
        validUntil: `0x${data.validUntil.toString(16)}`,
      });
    }
    if (data.validAfter > context.nowSeconds) {
      throw new BundlerError(RpcErrorCode.outOfTimeRange, `${entity} is not valid before ${data.validAfter}`, {
        validAfter: `0x${data.validAfter.toString(16)}`,
      });
    }
  }
  const verificationGasUsed = result.preOpGas - op.preVerificationGas;
  const required = calculatePreVerificationGas(op, verificationGasUsed > 0n ? verificationGasUsed : 0n, context.preVerificationGas);
  if (op.preVerificationGas < required) {
    throw new InvalidParamsError(
      "preVerificationGas",
      `too low: expected at least ${required}, provided only ${op.preVerificationGas}`,
    );
  }
  return result;
}
