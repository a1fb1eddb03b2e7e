import { type Address, concat, type Hex, pad, size, slice } from "viem";
import { InfrastructureError } from "../errors/errors.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import type { MempoolEntry } from "../ports/mempool-store.ts";
import { entitiesOf } from "../userop/entities.ts";
import type { CallState } from "../ports/eth-call.ts";
import { ethCall } from "../validation/eth-call.ts";
import { mergeStateOverrides } from "../validation/state-override.ts";
import type { RejectedEntry } from "./build-bundle.ts";

/** What the checks before bundling decided. */
export interface BundleRevalidation {
  /** Still valid: bundle them. */
  keep: MempoolEntry[];
  /** Invalid now (COD-010): drop them. */
  rejected: RejectedEntry[];
  /** Touch the storage of the sender of another operation being bundled or sent (STO-041): they wait in the pool until it lands. */
  deferred: MempoolEntry[];
}

/**
 * Runtime code that answers `EXTCODEHASH` of each 32-byte word of its calldata, in order:
 * `for (i = 0; i < calldatasize; i += 32) mstore(i, extcodehash(calldataload(i))); return(0, calldatasize)`.
 * Placed by state override, so one `eth_call` reads every code hash a bundle depends on.
 */
const codeHashReader: Hex = "0x60005b368110600d57366000f35b80353f8152602001600256";
const codeHashReaderAddress: Address = "0x00000000000000000000000000000000c0de4a54";

/**
 * The cheap second validation of operations validated in safe mode, before they go into a
 * bundle: the code of every contract their validation used is unchanged (COD-010), and none
 * uses the storage of the sender of another operation in this bundle or in flight (`inFlight`:
 * being bundled or sent), whose execution could change what it validated on (STO-041).
 * Operations without validation facts (admitted in unsafe mode) pass unchecked.
 */
export async function revalidateBundle(
  client: ChainClient,
  entries: readonly MempoolEntry[],
  inFlight: readonly MempoolEntry[] = [],
  state: CallState = {},
): Promise<BundleRevalidation> {
  const senders = new Set([...entries, ...inFlight].map((e) => e.userOperation.sender.toLowerCase()));
  const keep: MempoolEntry[] = [];
  const deferred: MempoolEntry[] = [];
  for (const entry of entries) {
    const own = entry.userOperation.sender.toLowerCase();
    const conflict = entry.validation?.storageContracts.some((contract) => contract !== own && senders.has(contract));
    (conflict ? deferred : keep).push(entry);
  }
  const addresses = [...new Set(keep.flatMap((e) => Object.keys(e.validation?.codeHashes ?? {})))] as Address[];
  if (addresses.length === 0) return { keep, rejected: [], deferred };
  const current = await readCodeHashes(client, addresses, state);
  const rejected: RejectedEntry[] = [];
  const valid: MempoolEntry[] = [];
  for (const entry of keep) {
    const changed = Object.entries(entry.validation?.codeHashes ?? {}).find(([address, hash]) => current.get(address) !== hash);
    if (!changed) {
      valid.push(entry);
      continue;
    }
    const [address] = changed;
    const entity = entitiesOf(entry.userOperation).find((e) => e.address.toLowerCase() === address && e.role !== "aggregator")?.role;
    const text = `COD-010: the code of ${address} changed since the operation was validated`;
    rejected.push({ entry, reason: text, failure: { code: undefined, entity: entity as "account" | "factory" | "paymaster" | undefined, text }, stage: "revalidation" });
  }
  return { keep: valid, rejected, deferred };
}

/** `EXTCODEHASH` of each address now (on `state`), in one `eth_call` (lower-case address → hash). */
async function readCodeHashes(client: ChainClient, addresses: readonly Address[], state: CallState): Promise<Map<string, Hex>> {
  const result = await ethCall(client, {
    to: codeHashReaderAddress,
    data: concat(addresses.map((a) => pad(a))),
    stateOverride: mergeStateOverrides(state.stateOverride, { [codeHashReaderAddress]: { code: codeHashReader } }),
    block: state.block,
    blockOverride: state.blockOverride,
  });
  if (result.reverted || size(result.data) !== addresses.length * 32) {
    throw new InfrastructureError("could not read code hashes for the checks before bundling");
  }
  return new Map(addresses.map((address, i) => [address.toLowerCase(), slice(result.data, i * 32, (i + 1) * 32)]));
}
