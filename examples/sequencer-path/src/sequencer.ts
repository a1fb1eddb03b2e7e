import { type Account, createWalletClient, type Hash, http, type PublicClient } from "viem";
import type { BundlePuller } from "./builder-api-client.ts";

export interface StartSequencerParameters {
  /** The chain the sequencer builds blocks of: anvil with automine off and `--order fifo`. */
  client: PublicClient;
  rpcUrl: string;
  /** The Bundlekit engine in pull mode, in process or over the builder API (`builderApiClient`). */
  bundler: BundlePuller;
  /** Signs and sends the bundle transactions (and pays for them; the EntryPoint refunds it). */
  sequencer: Account;
  /** Sends the block's ordinary transactions. */
  filler?: Account | undefined;
  /** Ordinary transactions per block after the bundle. Default 3. */
  fillerTransactions?: number;
  /** Milliseconds between blocks. Without it, the sequencer builds a block only when `next()` is called. */
  blockTimeMs?: number | undefined;
  /** Share of the block gas limit offered to bundles. Default 1/2. */
  bundleShare?: number;
}

/** What the sequencer put in one block. */
export interface SequencedBlock {
  blockNumber: bigint;
  /** When the block was mined (`Date.now()`). */
  minedAt: number;
  bundle: { transactionHash: Hash; userOpHashes: Hash[] } | undefined;
  fillers: Hash[];
}

/**
 * A minimal rollup sequencer on the devnet. At each block time it asks the engine for the best
 * bundle for the next block (its gas budget, its base fee), sends it first, commits it (its
 * operations are preconfirmed from this moment), fills the rest of the block with ordinary
 * transactions, and mines the block with `evm_mine`. Nothing reaches the chain through the
 * bundler's own relayers.
 */
export function startSequencer(parameters: StartSequencerParameters) {
  const { client, bundler, sequencer } = parameters;
  const wallet = (account: Account) => createWalletClient({ account, chain: client.chain, transport: http(parameters.rpcUrl) });
  const blocks: SequencedBlock[] = [];
  const listeners = new Set<(block: SequencedBlock) => void>();
  let running = true;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();

  async function buildBlock(): Promise<SequencedBlock> {
    const latest = await client.getBlock({ blockTag: "latest" });
    const blockNumber = latest.number + 1n;
    const share = parameters.bundleShare ?? 0.5;
    const proposal = await bundler.proposeBundle({
      gasBudget: (latest.gasLimit * BigInt(Math.round(share * 1000))) / 1000n,
      baseFee: latest.baseFeePerGas ?? 0n,
      blockNumber,
      timestamp: latest.timestamp + 1n,
      from: sequencer.address,
      signer: { address: sequencer.address, signTransaction: (tx) => sequencer.signTransaction!(tx) },
    });
    let bundle: SequencedBlock["bundle"];
    if (proposal) {
      try {
        const transactionHash = await client.sendRawTransaction({ serializedTransaction: proposal.signedTransaction! });
        await bundler.commitBundle(proposal.id);
        bundle = { transactionHash, userOpHashes: proposal.userOpHashes };
      } catch {
        await bundler.releaseBundle(proposal.id);
      }
    }
    const fillers: Hash[] = [];
    if (parameters.filler) {
      const filler = wallet(parameters.filler);
      for (let i = 0; i < (parameters.fillerTransactions ?? 3); i++) {
        fillers.push(await filler.sendTransaction({ to: parameters.filler.address, value: 1n, chain: client.chain }));
      }
    }
    await client.request({ method: "evm_mine" } as never);
    return { blockNumber, minedAt: Date.now(), bundle, fillers };
  }

  async function built(): Promise<SequencedBlock> {
    const block = await buildBlock();
    blocks.push(block);
    for (const listener of listeners) listener(block);
    return block;
  }

  async function tick(blockTimeMs: number) {
    if (!running) return;
    const startedAt = Date.now();
    try {
      await built();
    } catch (error) {
      process.stderr.write(`sequencer: block failed: ${(error as Error).message.split("\n")[0]}\n`);
    }
    // A steady block time: the next block is due one block time after this one started.
    if (running) schedule(blockTimeMs, blockTimeMs - (Date.now() - startedAt));
  }
  const schedule = (blockTimeMs: number, delayMs: number) => {
    timer = setTimeout(() => {
      current = tick(blockTimeMs);
    }, Math.max(0, delayMs));
  };
  if (parameters.blockTimeMs !== undefined) schedule(parameters.blockTimeMs, parameters.blockTimeMs);

  return {
    blocks,
    /** Build the next block now, after the one being built if any, and resolve with it. */
    next(): Promise<SequencedBlock> {
      const block = current.then(built);
      current = block.then(
        () => {},
        () => {},
      );
      return block;
    },
    /** Call `listener` with each block built. Returns the unsubscribe function. */
    onBlock(listener: (block: SequencedBlock) => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    /** Stop after the block being built, if any. */
    async stop() {
      running = false;
      clearTimeout(timer);
      await current;
    },
  };
}

export type Sequencer = ReturnType<typeof startSequencer>;
