import type { BlockHead, BlockSource } from "../ports/block-source.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import type { Clock, Timer } from "../ports/clock.ts";
import type { Logger } from "../ports/logger.ts";

export interface CreatePollingBlockSourceParameters {
  client: ChainClient;
  clock: Clock;
  logger: Logger;
  /** Milliseconds between polls of the node's latest block. */
  intervalMs: number;
}

/**
 * A `BlockSource` that asks the node for its latest block every `intervalMs` while anyone is
 * subscribed, and tells subscribers when the head changed (number or hash). A failed poll is
 * logged and retried at the next interval.
 */
export function createPollingBlockSource(parameters: CreatePollingBlockSourceParameters): BlockSource {
  const { client, clock, logger, intervalMs } = parameters;
  const listeners = new Set<(head: BlockHead) => void>();
  let timer: Timer | undefined;
  let polling = false;
  let last: BlockHead | undefined;

  async function latest(): Promise<BlockHead> {
    const block = await client.getBlock({ blockTag: "latest" });
    return {
      number: block.number,
      hash: block.hash,
      parentHash: block.parentHash,
      timestamp: block.timestamp,
      baseFeePerGas: block.baseFeePerGas ?? 0n,
      gasLimit: block.gasLimit,
    };
  }

  async function poll() {
    timer = undefined;
    polling = true;
    try {
      const head = await latest();
      if (head.number !== last?.number || head.hash !== last.hash) {
        last = head;
        for (const listener of listeners) listener(head);
      }
    } catch (error) {
      logger.warn("could not read the latest block", { error: String(error) });
    }
    polling = false;
    if (listeners.size > 0) timer = clock.setTimeout(poll, intervalMs);
  }

  return {
    latest,
    subscribe(listener) {
      listeners.add(listener);
      if (!timer && !polling) timer = clock.setTimeout(poll, 0);
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0) {
          timer?.cancel();
          timer = undefined;
          last = undefined;
        }
      };
    },
  };
}
