import { sendRawTransactionConditional } from "../chain/send-raw-transaction-conditional.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import type { Submitter } from "../ports/submitter.ts";

/**
 * Sends bundles with `eth_sendRawTransactionConditional` (ERC-7796; served by Arbitrum and
 * OP-stack nodes). `knownAccounts` pins each sender's storage root as it is at submission, so
 * when a sender's state changes before inclusion the node drops the bundle instead of mining a
 * `handleOps` that reverts at the relayer's expense. Roots are read with `eth_getProof` from
 * `client`; the transaction goes to `submitClient` (default `client`).
 */
export function createConditionalSubmitter(
  client: ChainClient,
  submitClient: ChainClient = client,
): Submitter {
  return {
    name: "conditional",
    async submit(transaction, bundle) {
      const senders = [
        ...new Set((bundle?.senders ?? []).map((s) => s.toLowerCase() as `0x${string}`)),
      ];
      const proofs = await Promise.all(
        senders.map((address) => client.getProof({ address, storageKeys: [] })),
      );
      const knownAccounts = Object.fromEntries(
        senders.map((sender, i) => [sender, proofs[i]!.storageHash]),
      );
      return sendRawTransactionConditional(submitClient, transaction.serialized, { knownAccounts });
    },
  };
}
