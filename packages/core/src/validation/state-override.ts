import { type Address, concat, type Hex } from "viem";
import { InvalidParamsError } from "../errors/errors.ts";
import type { AccountOverride, StateOverride } from "../ports/eth-call.ts";
import type { UserOperation } from "../userop/types.ts";
import { parseAddress, parseBytes, parseHash, parseObject, parseQuantity, toQuantity } from "../userop/wire.ts";

/**
 * Combine overrides; for an account in both, `b`'s fields win and storage diffs are merged.
 * How a caller's override (`eth_estimateUserOperationGas`'s third parameter) and the engine's own
 * (a queued nonce, a topped-up balance) apply together.
 */
export function mergeStateOverrides(a: StateOverride | undefined, b: StateOverride | undefined): StateOverride | undefined {
  if (!a || !b) return a ?? b;
  const merged: StateOverride = { ...a };
  for (const [address, override] of Object.entries(b) as [Address, AccountOverride][]) {
    const existing = merged[address];
    merged[address] = existing
      ? { ...existing, ...override, ...(existing.stateDiff || override.stateDiff ? { stateDiff: { ...existing.stateDiff, ...override.stateDiff } } : {}) }
      : override;
  }
  return merged;
}

/**
 * The EIP-7702 delegation an operation's authorization sets, as code of its sender: how every
 * simulation sees the account the bundle transaction's authorization list will delegate. Empty
 * without an authorization.
 */
export function delegationOverride(op: UserOperation): StateOverride {
  if (!op.authorization) return {};
  return { [op.sender]: { code: concat(["0xef0100", op.authorization.address]) } };
}

/** Decode a state-override set from a request, naming the field at fault. Addresses come back checksummed. */
export function parseStateOverride(value: unknown, field: string): StateOverride {
  const result: StateOverride = {};
  for (const [key, raw] of Object.entries(parseObject(value, field))) {
    const at = `${field}.${key}`;
    const address = parseAddress(key, at);
    const o = parseObject(raw, at);
    const override: AccountOverride = {};
    for (const name of Object.keys(o)) {
      if (!["balance", "nonce", "code", "state", "stateDiff"].includes(name)) {
        throw new InvalidParamsError(`${at}.${name}`, "is not a state-override field (balance, nonce, code, state, stateDiff)");
      }
    }
    if (o.balance != null) override.balance = toQuantity(parseQuantity(o.balance, `${at}.balance`));
    if (o.nonce != null) override.nonce = toQuantity(parseQuantity(o.nonce, `${at}.nonce`, 64));
    if (o.code != null) override.code = parseBytes(o.code, `${at}.code`);
    if (o.state != null && o.stateDiff != null) throw new InvalidParamsError(at, "has both state and stateDiff");
    for (const name of ["state", "stateDiff"] as const) {
      if (o[name] == null) continue;
      const slots: Record<Hex, Hex> = {};
      for (const [slot, word] of Object.entries(parseObject(o[name], `${at}.${name}`))) {
        slots[parseHash(slot, `${at}.${name}`)] = parseHash(word, `${at}.${name}.${slot}`);
      }
      override[name] = slots;
    }
    result[address] = override;
  }
  return result;
}
