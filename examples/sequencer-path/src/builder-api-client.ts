import { type Bundler, toSignedTransaction } from "@bundlekit/core";
import { type BuilderProposalJson, signBuilderJwt } from "@bundlekit/server";
import type { Address, Hash, PublicClient, TransactionSerializable } from "viem";

/** The builder API answered `method` with a JSON-RPC error: its wire `code` and message. */
export class BuilderApiError extends Error {
  override name = "BuilderApiError";
  readonly method: string;
  readonly code: number;
  constructor(method: string, code: number, message: string) {
    super(`${method}: ${message} (${code})`);
    this.method = method;
    this.code = code;
  }
}

/** What the sequencer needs of the engine: the three pull calls. */
export type BundlePuller = Pick<Bundler, "proposeBundle" | "commitBundle" | "releaseBundle">;

/**
 * The pull calls over the stand-alone service's builder API (JSON-RPC, a fresh HS256 JWT per
 * request), for a sequencer in another process. A proposal asked with a `signer` is signed here,
 * at the signer's next pending nonce, as the engine would in process. (No `state`: a proposal on the latest block.)
 */
export function builderApiClient({ url, secret, client }: { url: string; secret: Uint8Array; client: PublicClient }): BundlePuller {
  let id = 0;
  /** The hashes of the proposals signed here: committing one needs no hash, as in process. */
  const signed = new Map<string, Hash>();
  async function call<T>(method: string, params: unknown[]): Promise<T> {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${signBuilderJwt(secret, Math.floor(Date.now() / 1000))}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params }),
    });
    const answer = (await response.json()) as { result?: T; error?: { code: number; message: string } };
    if (answer.error) throw new BuilderApiError(method, answer.error.code, answer.error.message);
    return answer.result as T;
  }
  const hex = (value: bigint) => `0x${value.toString(16)}`;
  return {
    async proposeBundle({ signer, from, blockNumber, timestamp, baseFee, gasBudget, entryPoint, beneficiary, state }) {
      if (state) throw new Error("builderApiClient sends no state: name block, stateOverride and blockOverride in builder_proposeBundle");
      const json = await call<BuilderProposalJson | null>("builder_proposeBundle", [
        { blockNumber: hex(blockNumber), timestamp: hex(timestamp), baseFee: hex(baseFee), gasBudget: hex(gasBudget), from, entryPoint, beneficiary },
      ]);
      if (!json) return undefined;
      const proposal = {
        id: json.id,
        entryPoint: json.entryPoint,
        blockNumber: BigInt(json.blockNumber),
        userOpHashes: json.userOpHashes,
        to: json.to,
        data: json.data,
        gas: BigInt(json.gas),
        fees: { maxFeePerGas: BigInt(json.maxFeePerGas), maxPriorityFeePerGas: BigInt(json.maxPriorityFeePerGas) },
        accessList: json.accessList ?? undefined,
        authorizationList: [],
        expiresAt: json.expiresAt,
      };
      if (!signer) return proposal;
      if (json.authorizationList.length > 0) throw new Error("an EIP-7702 bundle: sign it with its authorization list");
      const transaction: TransactionSerializable = {
        type: "eip1559",
        chainId: client.chain!.id,
        nonce: await client.getTransactionCount({ address: signer.address as Address, blockTag: "pending" }),
        to: json.to,
        data: json.data,
        gas: proposal.gas,
        ...proposal.fees,
        ...(json.accessList ? { accessList: json.accessList } : {}),
      };
      const signedHere = toSignedTransaction(await signer.signTransaction(transaction));
      const { serialized: signedTransaction, hash: transactionHash } = signedHere;
      signed.set(json.id, transactionHash);
      return { ...proposal, signedTransaction, transactionHash };
    },
    async commitBundle(id, { transactionHash } = {}) {
      const hash = transactionHash ?? signed.get(id);
      signed.delete(id);
      await call("builder_commitBundle", hash ? [id, hash] : [id]);
    },
    async releaseBundle(id) {
      signed.delete(id);
      await call("builder_releaseBundle", [id]);
    },
  };
}
