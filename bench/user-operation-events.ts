/** `UserOperationEvent`s on chain: how a bench sees operations included, without asking the service. */
import { type Address, type Hash, parseAbiItem, type PublicClient } from "viem";

export const userOperationEvent = parseAbiItem(
  "event UserOperationEvent(bytes32 indexed userOpHash, address indexed sender, address indexed paymaster, uint256 nonce, bool success, uint256 actualGasCost, uint256 actualGasUsed)",
);

/** One `UserOperationEvent` as a bench needs it. */
export interface IncludedOperation {
  userOpHash: Hash;
  success: boolean;
  transactionHash: Hash;
  blockNumber: bigint;
}

/** Every `UserOperationEvent` of `entryPoint` from `fromBlock` to `toBlock` (default: the head), in chain order. */
export async function userOperationEvents(
  client: PublicClient,
  entryPoint: Address,
  fromBlock: bigint,
  toBlock?: bigint,
): Promise<IncludedOperation[]> {
  const logs = await client.getLogs({
    address: entryPoint,
    event: userOperationEvent,
    fromBlock,
    toBlock: toBlock ?? (await client.getBlockNumber({ cacheTime: 0 })),
  });
  return logs.map((log) => ({
    userOpHash: log.args.userOpHash!,
    success: log.args.success!,
    transactionHash: log.transactionHash,
    blockNumber: log.blockNumber,
  }));
}

export interface WatchUserOperationEventsParameters {
  client: PublicClient;
  entryPoint: Address;
  /** The last block already seen: events after it are reported. */
  after: bigint;
  pollMs: number;
  /** Called with the events of each new range of blocks (possibly none). */
  onEvents: (events: IncludedOperation[]) => void;
  /** Told of a failed poll; the watcher retries at the next one. */
  onError: (error: unknown) => void;
}

/**
 * Poll the node for new blocks and report their `UserOperationEvent`s, each block once. Resolves
 * `stop()` once the poll in progress is done.
 */
export function watchUserOperationEvents(parameters: WatchUserOperationEventsParameters): {
  stop(): Promise<void>;
} {
  let watching = true;
  let lastBlock = parameters.after;
  const done = (async () => {
    while (watching) {
      try {
        const head = await parameters.client.getBlockNumber({ cacheTime: 0 });
        if (head > lastBlock) {
          parameters.onEvents(
            await userOperationEvents(
              parameters.client,
              parameters.entryPoint,
              lastBlock + 1n,
              head,
            ),
          );
          lastBlock = head;
        }
      } catch (error) {
        parameters.onError(error);
      }
      await new Promise((resolve) => setTimeout(resolve, parameters.pollMs));
    }
  })();
  return {
    async stop() {
      watching = false;
      await done;
    },
  };
}
