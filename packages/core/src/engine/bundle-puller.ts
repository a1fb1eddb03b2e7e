import { randomUUID } from "node:crypto";
import type { AccessList, Address, Hash, Hex } from "viem";
import type { Bundle } from "../bundle/build-bundle.ts";
import type { BundleFees } from "../bundle/bundle-fees.ts";
import { defaultMaxBundleGas } from "../bundle/bundle-gas.ts";
import { bundleTransaction } from "../bundle/bundle-transaction.ts";
import type { BundlingSettings } from "../bundle/bundling-settings.ts";
import { type ProposeBundleContext, proposeBundle } from "../bundle/propose-bundle.ts";
import type { EntryPointRegistry } from "../entrypoint/registry.ts";
import { InvalidParamsError, ProposalNotOpenError } from "../errors/errors.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import type { CallState } from "../ports/eth-call.ts";
import type { Clock, Timer } from "../ports/clock.ts";
import type { Logger } from "../ports/logger.ts";
import type { MempoolEntry, MempoolStore } from "../ports/mempool-store.ts";
import type { Preconfirmation, PreconfirmationStore } from "../ports/preconfirmation-store.ts";
import { type PreconfirmationSigner, signPreconfirmation } from "../preconfirmation/sign-preconfirmation.ts";
import type { RelayerLease } from "../ports/relayer-signer.ts";
import type { StatusListener } from "../status/status-change.ts";
import { toSignedTransaction } from "../submit/signed-transaction.ts";
import type { TransactionTracker } from "../submit/transaction-tracker.ts";
import { minOf } from "../utils/bigint-math.ts";
import type { BundleSender } from "./bundle-sender.ts";

/** What a sequencer's block builder asks for: the best bundle for this block. */
export interface ProposeBundleRequest {
  /** Only this EntryPoint. Default: the first served EntryPoint with a bundle to offer. */
  entryPoint?: Address | undefined;
  /** Most gas the bundle transaction may use in the block. */
  gasBudget: bigint;
  /** The block's base fee: operations that cannot pay it wait. */
  baseFee: bigint;
  /** The block the bundle is for. */
  blockNumber: bigint;
  /** The block's timestamp (seconds). */
  timestamp: bigint;
  /** The account that sends the bundle transaction: the simulation's sender, and the default beneficiary. */
  from: Address;
  /** Receives the EntryPoint's fee refunds. Default `from`. */
  beneficiary?: Address | undefined;
  /**
   * Sign the bundle here, at `from`'s next pending nonce. Default: the caller signs `to` and `data`
   * itself. A `RelayerLease` (one with `release`) is the proposal's to hold from then on: its
   * signed transaction reaches the node only in the builder's block, and until then another
   * transaction of the relayer would take the same nonce. It is released with the proposal, when
   * the proposal lapses, or once committed when its transaction is mined or gone.
   */
  signer?: Pick<RelayerLease, "address" | "signTransaction"> | RelayerLease | undefined;
  /**
   * The builder's state: the checks before bundling and the `handleOps` simulation run on the
   * node's `block` (`latest` by default, or `pending`) with these overrides on top (e.g. the
   * effects of the transactions placed before the bundle). No access list is attached then.
   */
  state?: CallState | undefined;
}

/** A bundle claimed for one block, until `commitBundle`, `releaseBundle`, or `expiresAt`. */
export interface BundleProposal {
  id: string;
  entryPoint: Address;
  blockNumber: bigint;
  userOpHashes: Hash[];
  /** The `handleOps` call: `to` is the EntryPoint. */
  to: Address;
  data: Hex;
  /** Gas limit for the transaction: the estimate with `bundling.gasLimitMarkupPercent`, within `gasBudget`. */
  gas: bigint;
  /** Most per gas the operations repay. */
  fees: BundleFees;
  /** EIP-2930 access list of the call, with `bundling.accessList` on. */
  accessList?: AccessList | undefined;
  authorizationList: Bundle["authorizationList"];
  /** Milliseconds since the epoch (engine clock) when the claim lapses back to the pool. */
  expiresAt: number;
  /** With a `signer`: the signed transaction and its hash. */
  signedTransaction?: Hex | undefined;
  transactionHash?: Hash | undefined;
}

export interface BundlePullerContext {
  client: ChainClient;
  chainId: number;
  store: MempoolStore;
  entryPoints: EntryPointRegistry;
  tracker: TransactionTracker;
  bundleSender: Pick<BundleSender, "settleRejected">;
  clock: Clock;
  logger: Logger;
  emit: StatusListener;
  propose: ProposeBundleContext;
  /** `bundling.maxGas`, or what the chain's block holds: a pulled bundle never holds more. */
  maxBundleGas: bigint;
  settings: Pick<BundlingSettings, "gasLimitMarkupPercent" | "maxOperations" | "proposalLeaseMs" | "claimLeaseMs">;
  /** Report committed operations `preconfirmed` (pull mode); otherwise `submitted`, as on the push path. */
  preconfirming: () => boolean;
  /** Where preconfirmations are recorded. */
  preconfirmations: PreconfirmationStore;
  /** Signs them; without one they are unsigned. */
  preconfirmationSigner?: PreconfirmationSigner | undefined;
  /** Resolves once the claims this engine held before a restart are released: a proposal's claims must outlive that release. */
  releaseEarlierClaims: () => Promise<void>;
}

/**
 * The pull path: a sequencer's block builder asks for the bundle the policy picks for its block
 * (`propose`), puts it where it wants, and says whether the block holds it (`commit`: followed by
 * the transaction tracker and reported `preconfirmed` at once) or not (`release`: back to the
 * pool). A proposal with neither lapses back to the pool. Validation, the policy, reputation and
 * reconciliation are the push path's own.
 */
export function createBundlePuller(context: BundlePullerContext) {
  const { store, clock, emit } = context;
  const proposals = new Map<string, OpenProposal>();

  /** The proposal is no longer open (released, lapsed, or the engine stops): the relayer it held is given back. */
  function close(proposal: OpenProposal) {
    proposals.delete(proposal.id);
    proposal.lapses?.cancel();
    proposal.holds?.release();
  }

  function take(id: string) {
    const proposal = proposals.get(id);
    if (!proposal || proposal.expiresAt <= clock.now()) {
      if (proposal) close(proposal);
      throw new ProposalNotOpenError(id);
    }
    proposals.delete(id);
    return proposal;
  }

  return {
    async propose(request: ProposeBundleRequest, signal?: AbortSignal): Promise<BundleProposal | undefined> {
      await context.releaseEarlierClaims();
      for (const proposal of [...proposals.values()]) if (proposal.expiresAt <= clock.now()) close(proposal);
      const candidates = request.entryPoint ? [context.entryPoints.get(request.entryPoint)] : context.entryPoints.all;
      const head = { number: request.blockNumber, hash: `0x${"0".repeat(64)}` as Hash, timestamp: request.timestamp, baseFeePerGas: request.baseFee, gasLimit: request.gasBudget };
      const budget = defaultMaxBundleGas(request.gasBudget, context.settings.gasLimitMarkupPercent);
      for (const entryPoint of candidates) {
        signal?.throwIfAborted();
        const { bundle, rejected } = await proposeBundle(
          { ...context.propose, claimLeaseMs: context.settings.proposalLeaseMs },
          {
            entryPoint,
            relayer: request.from,
            beneficiary: request.beneficiary ?? request.from,
            head,
            gasBudget: minOf(budget, context.maxBundleGas),
            maxOperations: context.settings.maxOperations,
            state: request.state,
          },
        );
        await context.bundleSender.settleRejected(entryPoint, rejected);
        if (!bundle) continue;
        const transaction = bundleTransaction(bundle, {
          chainId: context.chainId,
          fees: bundle.fees,
          gasLimitMarkupPercent: context.settings.gasLimitMarkupPercent,
          maxGas: request.gasBudget,
        });
        const proposal: OpenProposal = {
          id: randomUUID(),
          entryPoint: entryPoint.address,
          blockNumber: request.blockNumber,
          userOpHashes: bundle.entries.map((e) => e.userOpHash),
          to: transaction.to,
          data: transaction.data,
          gas: transaction.gas,
          fees: bundle.fees,
          ...(bundle.accessList ? { accessList: bundle.accessList } : {}),
          authorizationList: bundle.authorizationList,
          expiresAt: clock.now() + context.settings.proposalLeaseMs,
          entries: bundle.entries,
        };
        if (request.signer) {
          const nonce = await context.client.getTransactionCount({ address: request.signer.address, blockTag: "pending" });
          const signed = toSignedTransaction(await request.signer.signTransaction({ ...transaction, nonce }));
          proposal.signedTransaction = signed.serialized;
          proposal.transactionHash = signed.hash;
        }
        if (request.signer && "release" in request.signer) {
          proposal.holds = request.signer;
          proposal.lapses = clock.setTimeout(() => close(proposal), context.settings.proposalLeaseMs);
        }
        proposals.set(proposal.id, proposal);
        const { entries: _entries, holds: _holds, lapses: _lapses, ...answer } = proposal;
        return answer;
      }
      return undefined;
    },

    /**
     * The block holds the proposal's bundle, as `transactionHash` (default: the hash of the
     * transaction signed at `propose`). Its operations become `submitted`, followed by the
     * tracker, and (in pull mode) preconfirmed for the promised block: each one's preconfirmation
     * signed, stored, then reported in a `preconfirmed` event.
     */
    async commit(id: string, parameters: { transactionHash?: Hash | undefined } = {}): Promise<void> {
      const proposal = take(id);
      const transactionHash = parameters.transactionHash ?? proposal.transactionHash;
      if (!transactionHash) {
        proposals.set(id, proposal);
        throw new InvalidParamsError("transactionHash", "the bundle was signed by the caller: give the hash of the transaction the block holds");
      }
      proposal.lapses?.cancel();
      const { blockNumber, entryPoint } = proposal;
      const promised = context.preconfirming();
      let preconfirmations: Preconfirmation[];
      try {
        await store.markSubmitted(proposal.userOpHashes, transactionHash, clock.now());
        // Held as a sent bundle is from now on, not for the proposal's short lease: until the tracker
        // renews the claim at the next block, no other engine on the store may adopt them.
        await store.renewClaims(proposal.userOpHashes, context.propose.claimant, clock.now() + context.settings.claimLeaseMs);
        preconfirmations = promised
          ? await Promise.all(
              proposal.userOpHashes.map((userOpHash) =>
                signPreconfirmation(context.preconfirmationSigner, { userOpHash, entryPoint, chainId: context.chainId, blockNumber, transactionHash }),
              ),
            )
          : [];
        await context.preconfirmations.promise(preconfirmations);
      } catch (error) {
        proposal.holds?.release();
        throw error;
      }
      // The relayer it holds goes with it: released once the transaction is mined or gone.
      context.tracker.watch(transactionHash, proposal.entries, { notBefore: blockNumber, promised, relayer: proposal.holds });
      for (const userOpHash of proposal.userOpHashes) if (!promised) emit({ userOpHash, status: "submitted", transactionHash });
      for (const preconfirmation of preconfirmations) {
        emit({ userOpHash: preconfirmation.userOpHash, status: "preconfirmed", transactionHash, blockNumber, preconfirmation });
      }
      context.logger.info("bundle committed by the sequencer", { transactionHash, blockNumber, ops: proposal.userOpHashes.length });
    },

    /** The block does not hold the proposal's bundle: its operations go back to the pool. */
    async release(id: string): Promise<void> {
      const proposal = take(id);
      close(proposal);
      await store.requeue(proposal.userOpHashes, clock.now());
    },

    /** Close every open proposal, giving back the relayers they hold (the engine stops). */
    closeAll(): void {
      for (const proposal of [...proposals.values()]) close(proposal);
    },
  };
}

export type BundlePuller = ReturnType<typeof createBundlePuller>;

/** A proposal while it is open: its operations, and the relayer it holds (signed here with a lease) with the timer that lapses it. */
interface OpenProposal extends BundleProposal {
  entries: MempoolEntry[];
  holds?: RelayerLease | undefined;
  lapses?: Timer | undefined;
}
