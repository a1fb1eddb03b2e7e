import { type AccessList, type Address, encodeFunctionData, type Hex, parseAbi } from "viem";
import { type CreateAccessListResult, createAccessList, type RpcAuthorization, type RpcCallRequest } from "../chain/create-access-list.ts";
import type { EntryPoint } from "../entrypoint/registry.ts";
import { type FailureReason, parseFailureReason } from "../errors/failure-reason.ts";
import { InfrastructureError } from "../errors/errors.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import type { CallState } from "../ports/eth-call.ts";
import type { MempoolEntry } from "../ports/mempool-store.ts";
import type { Simulator } from "../ports/simulator.ts";
import { encodeHandleOps } from "../userop/encode-handle-ops.ts";
import { splitNonce } from "../userop/types.ts";
import { decodeEntryPointRevert } from "../validation/entry-point-revert.ts";
import { estimateGas, ethCall } from "../validation/eth-call.ts";
import { maxOf } from "../utils/bigint-math.ts";
import { bundleGasOf } from "./bundle-gas.ts";

/** A `handleOps` call ready to sign. */
export interface Bundle {
  entryPoint: EntryPoint;
  entries: MempoolEntry[];
  data: Hex;
  /** `eth_estimateGas` of the call (or, unvalidated, the sum of the operations' gas limits). */
  gas: bigint;
  /** EIP-2930 access list from `eth_createAccessList`, when asked for. */
  accessList?: AccessList | undefined;
  /** EIP-7702 authorizations of the operations (any EntryPoint version); non-empty makes the transaction type 4. */
  authorizationList: NonNullable<Extract<MempoolEntry["userOperation"], { authorization?: unknown }>["authorization"]>[];
}

/** An operation the builder dropped, with the EntryPoint's reason. */
export interface RejectedEntry {
  entry: MempoolEntry;
  reason: string;
  /** `reason` parsed: its `AAxx` code and the entity it blames. */
  failure: FailureReason;
  /**
   * Where it was refused: `revalidation`, the checks before bundling (the second validation), or
   * `simulation`, the `handleOps` simulation after them (GREP-040 blames the entity at fault).
   */
  stage: "revalidation" | "simulation";
}

export interface BuildBundleOptions {
  /** Skip the `handleOps` simulation (`skipBundleValidation`): nothing is dropped, gas is the operations' limits. */
  skipValidation?: boolean | undefined;
  /** Attach an EIP-2930 access list from `eth_createAccessList` (`eip2930`); never on a `state` other than the latest block's. */
  accessList?: boolean | undefined;
  /** Simulate on this block and overrides (a block builder's state). Default the latest block. */
  state?: CallState | undefined;
  /** Estimates `handleOps` from its operations when it can (`Simulator.estimateHandleOps`); else the chain estimates the calldata. */
  simulator?: Pick<Simulator, "estimateHandleOps"> | undefined;
}

/** What the builder made of the claimed operations. */
export interface BuiltBundle {
  /** Undefined when no operation is left to bundle. */
  bundle: Bundle | undefined;
  /** Refused by the EntryPoint for good: dropped from the pool. */
  rejected: RejectedEntry[];
  /**
   * Not valid in this bundle but may become valid: a sender's later nonces after its operation
   * refused here, and an operation whose nonce is ahead of the sender's (AA25, its predecessor
   * not landed yet). They wait in the pool.
   */
  deferred: MempoolEntry[];
}

/**
 * Turn claimed operations into a `handleOps` call that the node accepts: estimate it, and while
 * the EntryPoint names a failing operation (`FailedOp`), drop that one and try again. Operations
 * valid at admission can fail here when chain state moved on. A refused operation takes the
 * sender's later nonces (same key) out of the bundle with it, back to the pool: they follow it
 * once a valid operation takes its nonce.
 */
export async function buildBundle(
  client: ChainClient,
  entryPoint: EntryPoint,
  entries: readonly MempoolEntry[],
  relayer: Address,
  beneficiary: Address,
  options: BuildBundleOptions = {},
): Promise<BuiltBundle> {
  const rejected: RejectedEntry[] = [];
  const deferred: MempoolEntry[] = [];
  let candidates = [...entries];
  // A simulator told the operations estimates without their calldata: it is encoded once, for the bundle.
  const estimator = options.state || options.skipValidation ? undefined : options.simulator;
  const estimatedFromOps = options.skipValidation || estimator?.estimateHandleOps !== undefined;
  while (candidates.length > 0) {
    const ops = candidates.map((entry) => entry.userOperation);
    const authorizationList = ops.flatMap((op) => (op.authorization ? [op.authorization] : []));
    const callOf = (data: Hex) => ({
      from: relayer,
      to: entryPoint.address,
      data,
      ...(authorizationList.length > 0 ? { authorizationList: authorizationList.map(toRpcAuthorization) } : {}),
    });
    let data = estimatedFromOps ? undefined : encodeHandleOps(entryPoint, ops, beneficiary);
    const result = options.skipValidation
      ? { reverted: false as const, gas: ops.reduce((sum, op) => sum + bundleGasOf(op), 0n) }
      : data === undefined
        ? await estimator!.estimateHandleOps!(entryPoint, ops, relayer)
        : await estimateGas(client, { ...callOf(data), ...callState(options.state) });
    if (!result.reverted) {
      data ??= encodeHandleOps(entryPoint, ops, beneficiary);
      const bundle: Bundle = { entryPoint, entries: candidates, data, gas: result.gas, authorizationList };
      // eth_createAccessList takes no overrides: a list of the latest state would not be the builder's.
      if (options.accessList && !options.state) {
        const created = await accessListOf(client, callOf(data));
        if (created) Object.assign(bundle, { accessList: created.accessList, gas: maxOf(bundle.gas, created.gasUsed) });
      }
      return { bundle, rejected, deferred };
    }
    const failure = decodeEntryPointRevert(entryPoint.abi, result.data);
    const index = failure?.opIndex;
    if (index === undefined || index >= candidates.length) {
      if (result.data === "0x" && !failure) {
        throw new InfrastructureError(`handleOps estimation failed without revert data: ${result.message}`);
      }
      for (const entry of candidates) rejected.push(rejectedEntry(entry, failure?.reason ?? result.message));
      return { bundle: undefined, rejected, deferred };
    }
    const refused = rejectedEntry(candidates[index]!, failure!.reason);
    const { userOperation: op } = refused.entry;
    const chainNonce = refused.failure.code === 25 ? await senderNonce(client, entryPoint, op, options.state) : undefined;
    // A nonce used already (included elsewhere) holds back none of the sender's later ones.
    const used = chainNonce !== undefined && chainNonce > op.nonce;
    const later = used ? [] : candidates.filter(({ userOperation: o }) => sameNonceKey(o, op) && o.nonce > op.nonce);
    if (chainNonce !== undefined && chainNonce < op.nonce) deferred.push(refused.entry);
    else rejected.push(refused);
    deferred.push(...later);
    candidates = candidates.filter((entry) => entry !== refused.entry && !later.includes(entry));
  }
  return { bundle: undefined, rejected, deferred };
}

const getNonceAbi = parseAbi(["function getNonce(address sender, uint192 key) view returns (uint256)"]);

/** Whether two operations are of one sender on one nonce key. */
function sameNonceKey(a: { sender: Address; nonce: bigint }, b: { sender: Address; nonce: bigint }): boolean {
  return a.sender.toLowerCase() === b.sender.toLowerCase() && splitNonce(a.nonce).key === splitNonce(b.nonce).key;
}

/** The EntryPoint's next nonce of the operation's sender on its key (`getNonce`), on `state`. */
async function senderNonce(client: ChainClient, entryPoint: EntryPoint, op: { sender: Address; nonce: bigint }, state: CallState | undefined): Promise<bigint> {
  const data = encodeFunctionData({ abi: getNonceAbi, functionName: "getNonce", args: [op.sender, splitNonce(op.nonce).key] });
  const result = await ethCall(client, { to: entryPoint.address, data, ...callState(state) });
  if (result.reverted) throw new InfrastructureError(`getNonce of ${op.sender} reverted`);
  return BigInt(result.data);
}

/** The call fields of a simulation state; none for the latest block. */
function callState(state: CallState | undefined) {
  if (!state) return {};
  return {
    ...(state.block ? { block: state.block } : {}),
    ...(state.stateOverride ? { stateOverride: state.stateOverride } : {}),
    ...(state.blockOverride ? { blockOverride: state.blockOverride } : {}),
  };
}

function rejectedEntry(entry: MempoolEntry, reason: string): RejectedEntry {
  return { entry, reason, failure: parseFailureReason(reason), stage: "simulation" };
}

/**
 * `eth_createAccessList` of the bundle call; undefined when the node reports the call failing
 * (the bundle then goes without a list). Transport failures throw.
 */
async function accessListOf(client: ChainClient, call: RpcCallRequest) {
  let result: CreateAccessListResult;
  try {
    result = await createAccessList(client, call);
  } catch (error) {
    if (/revert/i.test(String((error as Error).message))) return undefined;
    throw new InfrastructureError(`eth_createAccessList failed: ${(error as Error).message?.split("\n")[0]}`, { cause: error });
  }
  if (result.error) return undefined;
  return { accessList: result.accessList, gasUsed: BigInt(result.gasUsed) };
}


function toRpcAuthorization(a: Bundle["authorizationList"][number]): RpcAuthorization {
  return {
    address: a.address,
    chainId: `0x${a.chainId.toString(16)}`,
    nonce: `0x${a.nonce.toString(16)}`,
    yParity: `0x${(a.yParity ?? 0).toString(16)}`,
    r: a.r,
    s: a.s,
  };
}
