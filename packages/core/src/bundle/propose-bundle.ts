import type { Address } from "viem";
import type { EntryPoint } from "../entrypoint/registry.ts";
import type { GasPrice } from "../gas/fee-oracle.ts";
import type { BlockHead } from "../ports/block-source.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import type { CallState } from "../ports/eth-call.ts";
import type { MempoolPolicy } from "../ports/mempool-policy.ts";
import type { MempoolEntry, MempoolStore } from "../ports/mempool-store.ts";
import type { Simulator } from "../ports/simulator.ts";
import { type Bundle, buildBundle, type RejectedEntry } from "./build-bundle.ts";
import type { BundlingSettings } from "./bundling-settings.ts";
import { type BundleFees, bundleFees } from "./bundle-fees.ts";
import { entitiesOf } from "../userop/entities.ts";
import { type Reputation, throttledEntityBundleCount } from "../reputation/reputation.ts";
import { bundleGasOf } from "./bundle-gas.ts";
import { bundledOperationSize, handleOpsCalldataOverhead } from "../validation/size-limits.ts";
import { revalidateBundle } from "./revalidate-bundle.ts";

/** Rough least gas of one operation in a bundle: how many candidates a gas budget may need. */
const leastOperationGas = 40_000n;
/** Candidates claimed per operation a bundle can hold, so the policy chooses among more than the oldest. */
const candidatesPerSlot = 4;

export interface ProposeBundleContext {
  client: ChainClient;
  store: MempoolStore;
  policy: MempoolPolicy;
  /** Names this engine in claims. */
  claimant: string;
  claimLeaseMs: number;
  now: () => number;
  getGasPrice: () => Promise<GasPrice>;
  /** Estimates `handleOps` from its operations when it can (`Simulator.estimateHandleOps`). */
  simulator?: Pick<Simulator, "estimateHandleOps"> | undefined;
  /** Throttled entities get at most `throttledEntityBundleCount` operations per bundle (GREP-020). */
  reputation?: Pick<Reputation, "throttled"> | undefined;
  /**
   * The bundle's limits besides gas (LIM-040 calldata, LIM-050 context), whether `handleOps` is
   * simulated first and carries an access list, and the most it bids per gas: while the base fee
   * is above `maxFeePerGas`, nothing is bundled.
   */
  settings: Pick<BundlingSettings, "maxCalldataBytes" | "maxContextBytes" | "skipValidation" | "accessList" | "maxFeePerGas" | "uniqueSenders">;
}

export interface ProposeBundleParameters {
  entryPoint: EntryPoint;
  /** The relayer that will send it (the simulation's `from`). */
  relayer: Address;
  beneficiary: Address;
  head: BlockHead;
  gasBudget: bigint;
  maxOperations: number;
  /** The state the checks before bundling and the `handleOps` simulation run on (a block builder's). Default the latest block. */
  state?: CallState | undefined;
}

export interface ProposedBundle {
  /** Undefined when nothing is ready to bundle. */
  bundle: (Bundle & { fees: BundleFees }) | undefined;
  /** Operations the EntryPoint refused when the bundle was simulated; still `bundling` in the store. */
  rejected: RejectedEntry[];
}

/**
 * The bundle proposer: claim candidates, let the policy choose within the gas budget and the
 * block, and simulate `handleOps` until the node accepts it. Operations that cannot pay the
 * block's base fee, or that the policy leaves out, go straight back to the pool. The bundle bids
 * what its operations repay at most (`bundleFees`).
 */
export async function proposeBundle(context: ProposeBundleContext, parameters: ProposeBundleParameters): Promise<ProposedBundle> {
  const { store, policy } = context;
  const { entryPoint, head, gasBudget, maxOperations } = parameters;
  const slots = Math.min(maxOperations, Number(gasBudget / leastOperationGas) + 1);
  const candidates = await store.claimForBundle({
    entryPoint: entryPoint.address,
    limit: slots * candidatesPerSlot,
    perSender: context.settings.uniqueSenders ? 1 : slots,
    claimant: context.claimant,
    leaseMs: context.claimLeaseMs,
    now: context.now(),
  });
  if (candidates.length === 0) return { bundle: undefined, rejected: [] };
  // An operation that cannot pay this block's base fee, or whose bundle could not bid it, waits in the pool until it can.
  const { settings } = context;
  const bidCap = settings.maxFeePerGas;
  const payable = candidates.filter((c) => c.userOperation.maxFeePerGas >= head.baseFeePerGas && (bidCap === undefined || bidCap >= head.baseFeePerGas));
  const limits = { gasBudget, maxOperations, gasOf: (e: MempoolEntry) => bundleGasOf(e.userOperation), block: head };
  const selected = withinLimits(payable, inNonceOrder(policy.select(payable, limits)), { ...limits, maxCalldataBytes: settings.maxCalldataBytes, maxContextBytes: settings.maxContextBytes });
  // The second validation's cheap checks: code unchanged (COD-010), no storage of another bundled sender (STO-041).
  const inFlight = selected.some((e) => e.validation)
    ? (await Promise.all((["bundling", "submitted"] as const).map((status) => store.list(status, { entryPoint: entryPoint.address })))).flat()
    : [];
  const { keep: valid, rejected: invalid } = await revalidateBundle(context.client, selected, inFlight, parameters.state).catch(async (error) => {
    await store.requeue(candidates.map((c) => c.userOpHash), context.now());
    throw error;
  });
  const chosen = context.reputation ? await withinThrottle(context.reputation, entryPoint.address, valid) : valid;
  // The unselected, the deferred (STO-041) and those over a throttled entity's share wait in the pool for another bundle.
  const unselected = candidates.filter((c) => !chosen.includes(c) && !invalid.some((r) => r.entry === c)).map((c) => c.userOpHash);
  if (unselected.length > 0) await store.requeue(unselected, context.now());
  if (chosen.length === 0) return { bundle: undefined, rejected: invalid };

  try {
    const { bundle, rejected, deferred } = await buildBundle(
      context.client,
      entryPoint,
      chosen,
      parameters.relayer,
      parameters.beneficiary,
      { ...settings, state: parameters.state, simulator: context.simulator },
    );
    // A sender's nonces after a refused one, or ahead of its nonce, wait in the pool until they are valid.
    if (deferred.length > 0) await store.requeue(deferred.map((e) => e.userOpHash), context.now());
    if (!bundle) return { bundle: undefined, rejected: [...invalid, ...rejected] };
    const fees = bundleFees(await context.getGasPrice(), bundle.entries.map((e) => e.userOperation), bidCap);
    return { bundle: { ...bundle, fees }, rejected: [...invalid, ...rejected] };
  } catch (error) {
    // The node failed us, not the operations: they go back to the pool for the next attempt.
    await store.requeue(chosen.map((c) => c.userOpHash), context.now());
    throw error;
  }
}

/**
 * What the policy chose, in its order, kept to real candidates, each once, within the limits:
 * a policy cannot make the engine send a bundle the block cannot hold, nor one above ERC-7562's
 * calldata (LIM-040) and paymaster context (LIM-050) sizes, nor one where a sender's operation
 * comes without the operation of the nonce before it (same key) that is also a candidate. An
 * operation that does not fit is passed over for the ones after it, and waits in the pool for
 * another bundle.
 */
function withinLimits(
  candidates: readonly MempoolEntry[],
  chosen: readonly MempoolEntry[],
  limits: Pick<BundlingSettings, "maxCalldataBytes" | "maxContextBytes"> & { gasBudget: bigint; maxOperations: number; gasOf: (e: MempoolEntry) => bigint },
): MempoolEntry[] {
  const byHash = new Map(candidates.map((c) => [c.userOpHash, c]));
  const picked: MempoolEntry[] = [];
  const taken = new Set<MempoolEntry>();
  const bySender = entriesBySender(candidates);
  let gas = 0n;
  let calldataSize = handleOpsCalldataOverhead;
  let contextSize = 0;
  for (const { userOpHash } of chosen) {
    const candidate = byHash.get(userOpHash);
    if (!candidate || taken.has(candidate) || picked.length >= limits.maxOperations) continue;
    const { sender, nonce } = candidate.userOperation;
    const previous = bySender.get(sender)!.findLast((c) => c.userOperation.nonce === nonce - 1n);
    if (previous && !taken.has(previous)) continue;
    const needed = limits.gasOf(candidate);
    if (gas + needed > limits.gasBudget) continue;
    const bytes = bundledOperationSize(candidate.userOperation);
    if (calldataSize + bytes > limits.maxCalldataBytes) continue;
    const context = candidate.paymasterContextSize ?? 0;
    if (contextSize + context > limits.maxContextBytes) continue;
    gas += needed;
    calldataSize += bytes;
    contextSize += context;
    picked.push(candidate);
    taken.add(candidate);
  }
  return picked;
}

/**
 * The entries of each sender (by its address as written), in their order: `withinLimits` looks
 * for the operation of the nonce before among one sender's few, with no key made per operation.
 */
function entriesBySender(entries: readonly MempoolEntry[]): Map<string, MempoolEntry[]> {
  const bySender = new Map<string, MempoolEntry[]>();
  for (const entry of entries) {
    const list = bySender.get(entry.userOperation.sender);
    if (list) list.push(entry);
    else bySender.set(entry.userOperation.sender, [entry]);
  }
  return bySender;
}

/**
 * The policy's order, except that each sender's operations take the places its operations hold
 * in nonce order: within one bundle a sender's nonces must run in order.
 */
function inNonceOrder(chosen: readonly MempoolEntry[]): MempoolEntry[] {
  const bySender = entriesBySender(chosen);
  for (const entries of bySender.values()) entries.sort((a, b) => (a.userOperation.nonce < b.userOperation.nonce ? -1 : 1));
  return chosen.map((entry) => bySender.get(entry.userOperation.sender)!.shift()!);
}

/** GREP-020: at most `throttledEntityBundleCount` operations of each throttled entity, in order. */
async function withinThrottle(reputation: Pick<Reputation, "throttled">, entryPoint: Address, entries: readonly MempoolEntry[]): Promise<MempoolEntry[]> {
  const addresses = [...new Set(entries.flatMap((e) => entitiesOf(e.userOperation).map((x) => x.address)))];
  const throttled = await reputation.throttled(entryPoint, addresses);
  if (throttled.size === 0) return [...entries];
  const counts = new Map<string, number>();
  return entries.filter((entry) => {
    const mine = entitiesOf(entry.userOperation).map((e) => e.address.toLowerCase()).filter((a) => throttled.has(a));
    if (mine.some((a) => (counts.get(a) ?? 0) >= throttledEntityBundleCount)) return false;
    for (const a of mine) counts.set(a, (counts.get(a) ?? 0) + 1);
    return true;
  });
}
