import type { EntryPoint } from "../entrypoint/registry.ts";
import { EntryPointRejectionError } from "../errors/errors.ts";
import { entryPointReasons } from "../errors/failure-reason.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import type { MempoolEntry, MempoolStore } from "../ports/mempool-store.ts";
import { factoryOf, splitNonce, type UserOperation } from "../userop/types.ts";
import { deploymentOverride, deploysSender } from "./deployment-override.ts";
import { nonceOverride } from "./nonce-override.ts";
import { mergeStateOverrides } from "./state-override.ts";
import type { StateOverride } from "../ports/eth-call.ts";

/**
 * Run a simulation of an operation that may be queued behind the sender's previous nonce still in
 * the pool: then it runs as if that one had landed, with the nonce advanced, and for a new
 * account also deployed by its pooled first operation (on AA20). A sender may queue consecutive
 * operations without waiting for each to be bundled. The pool is read first, so a queued
 * operation costs one simulation, not a failed one (AA25) and then another.
 */
export async function withQueuedNonce<T>(
  context: { client: ChainClient; store: Pick<MempoolStore, "listBySender"> },
  entryPoint: EntryPoint,
  op: UserOperation,
  run: (override?: StateOverride) => Promise<T>,
): Promise<T> {
  const pooled = splitNonce(op.nonce).sequence > 0n ? await context.store.listBySender(entryPoint.address, op.sender) : [];
  const previous = op.nonce - 1n;
  const queued = pooled.some((e) => e.userOperation.nonce === previous) ? nonceOverride(entryPoint.address, op.sender, op.nonce) : undefined;
  try {
    return await run(queued);
  } catch (error) {
    if (!queued || !(error instanceof EntryPointRejectionError && error.failure.code === 20)) throw error;
    const deploying = pooled.find((e) => factoryOf(e.userOperation));
    const deployed = deploying && (await deploymentOverride(context.client, entryPoint, deploying.userOperation));
    if (!deployed) throw error;
    return run(mergeStateOverrides(deployed, queued));
  }
}

/**
 * Whether the EntryPoint will ignore the operation's factory: v0.9 ignores the factory data of a
 * sender already on chain (`deployed`) or deployed by another of its operations in the pool
 * (`pooled`), and emits `IgnoredInitCode`. Reputation does not count a factory it ignores.
 */
export function ignoresFactory(version: EntryPoint["version"], pooled: readonly MempoolEntry[], op: UserOperation, deployed: boolean): boolean {
  if (version !== "0.9" || !deploysSender(op)) return false;
  return deployed || pooled.some((e) => e.userOperation.nonce !== op.nonce && deploysSender(e.userOperation));
}

/**
 * Factory data that another of the sender's operations in the pool (`pooled`, any nonce but its
 * own) makes redundant, by deploying the sender, is refused with the EntryPoint's own answer:
 * AA10 "sender already constructed" (-32500), as whichever lands second would fail in its bundle.
 * Decided on what the pool holds, before simulation, which would run the factory again on the
 * account not yet deployed and pass: so on any nonce key, and on a node that cannot trace.
 * Admission and estimation both ask it. Not on v0.9, whose EntryPoint ignores the factory data of
 * a sender that exists (event `IgnoredInitCode`): whichever lands second just does not deploy.
 */
export function refuseRedundantFactory(pooled: readonly MempoolEntry[], op: UserOperation): void {
  if (!deploysSender(op)) return;
  const deploying = pooled.find((e) => e.userOperation.nonce !== op.nonce && deploysSender(e.userOperation));
  // v0.9's EntryPoint ignores the factory of a sender already deployed (`IgnoredInitCode`).
  if (deploying && deploying.entryPointVersion !== "0.9") throw new EntryPointRejectionError(entryPointReasons[10], { deployedBy: deploying.userOpHash });
}
