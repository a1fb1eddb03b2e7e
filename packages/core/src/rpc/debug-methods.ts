import type { Address } from "viem";
import type { Bundler } from "../engine/create-bundler.ts";
import { InvalidParamsError } from "../errors/errors.ts";
import type { ReputationEntry } from "../ports/reputation-store.ts";
import type { ReputationStatus } from "../reputation/reputation-status.ts";
import { encodeUserOperation } from "../userop/codec.ts";
import { parseAddress, parseInteger, parseObject, toQuantity } from "../userop/wire.ts";
import { expectParams, type RpcMethod } from "./methods.ts";

/**
 * Reputation statuses on the wire, as numbers: the reference bundler and the ERC-4337
 * compatibility suite read `status` with `int(x, 16)`, so ERC-7769's strings would fail them.
 */
export const reputationStatusCodes: Record<ReputationStatus, `0x${string}`> = {
  ok: "0x0",
  throttled: "0x1",
  banned: "0x2",
};

/** The `index`-th param as a served EntryPoint (-32602 when unsupported). */
function entryPointParam(params: readonly unknown[], index: number, bundler: Bundler): Address {
  return bundler.entryPoints.get(parseAddress(params[index], `params[${index}] (entryPoint)`))
    .address;
}

/** A reputation counter: a hex quantity, decimal string or JSON number that fits a safe integer. */
function parseCount(value: unknown, field: string): number {
  const count = parseInteger(value, field);
  if (count > BigInt(Number.MAX_SAFE_INTEGER)) throw new InvalidParamsError(field, "is too large");
  return Number(count);
}

function parseReputationEntries(value: unknown): ReputationEntry[] {
  if (!Array.isArray(value))
    throw new InvalidParamsError(
      "params[0] (reputations)",
      "expected an array of {address, opsSeen, opsIncluded}",
    );
  return value.map((item, i) => {
    const field = `params[0][${i}]`;
    const entry = parseObject(item, field);
    return {
      address: parseAddress(entry.address, `${field}.address`),
      opsSeen: parseCount(entry.opsSeen, `${field}.opsSeen`),
      opsIncluded: parseCount(entry.opsIncluded, `${field}.opsIncluded`),
    };
  });
}

/** Seconds, as a positive JSON number (fractions allowed) or an integer string; at least 10 ms. */
function parseIntervalMs(value: unknown): number {
  const field = "params[0] (interval)";
  const seconds = typeof value === "number" ? value : Number(parseInteger(value, field));
  if (!Number.isFinite(seconds) || seconds < 0.01) {
    throw new InvalidParamsError(field, `expected seconds, at least 0.01, got ${String(value)}`);
  }
  return Math.round(seconds * 1000);
}

/**
 * The `debug_bundler_*` methods of the ERC-4337 bundler compatibility suite (ERC-7769's testing
 * mode), in the shapes the reference bundler answers. They change the mempool and reputation at
 * will, so they are never part of `rpcMethods`: pass them to `createRpcHandler(bundler, { methods:
 * debugMethods })` only on test networks. See docs/reputation.md.
 */
export const debugMethods: Record<string, RpcMethod> = {
  /** Drop every unsent operation and forget all reputation. */
  async debug_bundler_clearState(params, bundler) {
    expectParams(params, 0, 0);
    await bundler.clearMempool();
    await bundler.clearReputation();
    return "ok";
  },
  async debug_bundler_clearMempool(params, bundler) {
    expectParams(params, 0, 0);
    await bundler.clearMempool();
    return "ok";
  },
  async debug_bundler_clearReputation(params, bundler) {
    expectParams(params, 0, 0);
    await bundler.clearReputation();
    return "ok";
  },
  /** The operations in the pool on the EntryPoint, oldest first, in their wire form. */
  async debug_bundler_dumpMempool(params, bundler) {
    expectParams(params, 1, 1);
    const entries = await bundler.dumpMempool(entryPointParam(params, 0, bundler));
    return entries.map((entry) => encodeUserOperation(entry.userOperation));
  },
  /**
   * Bundle now and wait for the receipt: the bundle's transaction hash (an array of hashes when
   * several EntryPoints bundled), or "ok" when nothing was pending.
   */
  async debug_bundler_sendBundleNow(params, bundler) {
    expectParams(params, 0, 0);
    const sent = await bundler.sendBundleNow();
    if (sent.length === 0) return "ok";
    return sent.length === 1 ? sent[0] : sent;
  },
  async debug_bundler_setBundlingMode(params, bundler) {
    expectParams(params, 1, 1);
    const mode = params[0];
    if (mode !== "auto" && mode !== "manual") {
      throw new InvalidParamsError(
        "params[0] (mode)",
        `expected "auto" or "manual", got ${JSON.stringify(mode) ?? "nothing"}`,
      );
    }
    bundler.setBundlingMode(mode);
    return "ok";
  },
  /** `[seconds]` between automatic bundles. */
  async debug_bundler_setBundleInterval(params, bundler) {
    expectParams(params, 1, 1);
    bundler.setBundleInterval(parseIntervalMs(params[0]));
    return "ok";
  },
  /** `[[{address, opsSeen, opsIncluded}], entryPoint]`: overwrite these counters. */
  async debug_bundler_setReputation(params, bundler) {
    expectParams(params, 2, 2);
    const entries = parseReputationEntries(params[0]);
    await bundler.setReputation(entryPointParam(params, 1, bundler), entries);
    return "ok";
  },
  /** `[entryPoint]` → `[{address, opsSeen, opsIncluded, status}]`, counters and status as hex numbers. */
  async debug_bundler_dumpReputation(params, bundler) {
    expectParams(params, 1, 1);
    const entries = await bundler.dumpReputation(entryPointParam(params, 0, bundler));
    return entries.map((entry) => ({
      address: entry.address,
      opsSeen: toQuantity(entry.opsSeen),
      opsIncluded: toQuantity(entry.opsIncluded),
      status: reputationStatusCodes[entry.status],
    }));
  },
  /** `[address, entryPoint]` → `{stakeInfo: {addr, stake, unstakeDelaySec}, isStaked}`, amounts as decimal strings. */
  async debug_bundler_getStakeStatus(params, bundler) {
    expectParams(params, 2, 2);
    const address = parseAddress(params[0], "params[0] (address)");
    const stake = await bundler.getStakeStatus(address, entryPointParam(params, 1, bundler));
    return {
      stakeInfo: {
        addr: stake.address,
        stake: stake.stake.toString(),
        unstakeDelaySec: stake.unstakeDelaySec.toString(),
      },
      isStaked: stake.isStaked,
    };
  },
};
