import type { EntryPoint } from "../entrypoint/registry.ts";
import { EntryPointRejectionError } from "../errors/errors.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import type { MempoolStore } from "../ports/mempool-store.ts";
import { factoryOf, splitNonce, type UserOperation } from "../userop/types.ts";
import { deploymentOverride } from "./deployment-override.ts";
import { nonceOverride } from "./nonce-override.ts";
import { mergeStateOverrides, type StateOverride } from "./state-override.ts";

/**
 * Run a simulation; when it fails because the operation is queued behind the sender's previous
 * nonce still in the pool, run it again as if that one had landed: with the nonce advanced
 * (AA25), and for a new account also deployed by its pooled first operation (AA20). A sender
 * may queue consecutive operations without waiting for each to be bundled.
 */
export async function withQueuedNonce<T>(
  context: { client: ChainClient; store: Pick<MempoolStore, "listBySender"> },
  entryPoint: EntryPoint,
  op: UserOperation,
  run: (override?: StateOverride) => Promise<T>,
): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof EntryPointRejectionError && (error.failure.code === 20 || error.failure.code === 25))) throw error;
    const pooled = splitNonce(op.nonce).sequence > 0n ? await context.store.listBySender(entryPoint.address, op.sender) : [];
    if (!pooled.some((e) => e.userOperation.nonce === op.nonce - 1n)) throw error;
    const queued = nonceOverride(entryPoint.address, op.sender, op.nonce);
    if (error.failure.code === 25) return run(queued);
    const deploying = pooled.find((e) => factoryOf(e.userOperation));
    const deployed = deploying && (await deploymentOverride(context.client, entryPoint, deploying.userOperation));
    if (!deployed) throw error;
    return run(mergeStateOverrides(deployed, queued));
  }
}
