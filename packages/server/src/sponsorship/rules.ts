import { maxCostOf, toQuantity } from "@bundlekit/core";
import { type Address, getAddress } from "viem";
import { type CallTargetDecoder, simpleAccountCallTargets } from "./call-targets.ts";
import { refuse, type SponsorshipPolicy, sponsor } from "./policy.ts";

/** Sponsors only operations whose sender is listed. */
export function onlySenders(senders: readonly Address[]): SponsorshipPolicy {
  const listed = new Set(senders.map((sender) => getAddress(sender)));
  return ({ userOperation: { sender } }) =>
    listed.has(getAddress(sender))
      ? sponsor
      : refuse(`sender ${getAddress(sender)} is not in this key's sender allowlist`, {
          cap: "senders",
          sender,
        });
}

/**
 * Sponsors only operations every call of which goes to a listed target, as `decode` reads them
 * from the account's `callData` (default: SimpleAccount's `execute`/`executeBatch`). A `callData`
 * it cannot decode, or one that calls nothing, is refused: a target allowlist sponsors nothing
 * it cannot see.
 */
export function onlyTargets(
  targets: readonly Address[],
  decode: CallTargetDecoder = simpleAccountCallTargets,
): SponsorshipPolicy {
  const listed = new Set(targets.map((target) => getAddress(target)));
  return ({ userOperation: { callData } }) => {
    const called = decode(callData);
    if (called === undefined || called.length === 0) {
      return refuse(
        "this key sponsors only calls to listed targets, and the operation's callData is not a call " +
          "this endpoint decodes (SimpleAccount execute or executeBatch)",
        { cap: "targets" },
      );
    }
    const unlisted = called.find((target) => !listed.has(getAddress(target)));
    return unlisted === undefined
      ? sponsor
      : refuse(`call target ${unlisted} is not in this key's target allowlist`, {
          cap: "targets",
          target: unlisted,
        });
  };
}

/** The most one sponsored operation may ask for. Absent caps are not checked. */
export interface GasCaps {
  /** Most `maxFeePerGas`, in wei. */
  maxFeePerGas?: bigint | undefined;
  /** Most `preVerificationGas`. */
  maxPreVerificationGas?: bigint | undefined;
  /**
   * Most the operation may cost the paymaster, in wei: every gas limit at `maxFeePerGas`, as the
   * EntryPoint reserves it (`maxCostOf`, what the engine checks deposits with).
   */
  maxCostPerOperation: bigint;
}

/**
 * Refuses an operation above a cap, naming the cap and its limit. Only signatures are capped:
 * stub data (for estimation) is signed by no trusted key, and its gas fields may still be zero.
 */
export function capGas(caps: GasCaps): SponsorshipPolicy {
  return ({ method, userOperation: op }) => {
    if (method !== "pm_getPaymasterData") return sponsor;
    const above = (field: string, cap: string, value: bigint, limit: bigint, unit = "") =>
      refuse(`${field} ${value}${unit} is above the cap ${cap} of ${limit}${unit}`, {
        cap,
        limit: toQuantity(limit),
        value: toQuantity(value),
      });
    if (caps.maxFeePerGas !== undefined && op.maxFeePerGas > caps.maxFeePerGas) {
      return above("maxFeePerGas", "maxFeePerGas", op.maxFeePerGas, caps.maxFeePerGas, " wei");
    }
    if (
      caps.maxPreVerificationGas !== undefined &&
      op.preVerificationGas > caps.maxPreVerificationGas
    ) {
      return above(
        "preVerificationGas",
        "maxPreVerificationGas",
        op.preVerificationGas,
        caps.maxPreVerificationGas,
      );
    }
    const cost = maxCostOf(op);
    if (cost > caps.maxCostPerOperation) {
      return above(
        "max cost (gas limits × maxFeePerGas)",
        "maxCostPerOperation",
        cost,
        caps.maxCostPerOperation,
        " wei",
      );
    }
    return sponsor;
  };
}
