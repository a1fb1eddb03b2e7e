import {
  type BlockOverride,
  type BundleProposal,
  type CallState,
  expectParams,
  InvalidParamsError,
  isAbsent,
  parseAddress,
  parseHash,
  parseObject,
  parseQuantity,
  parseStateOverride,
  type RelayerSigner,
  RpcError,
  RpcErrorCode,
  type RpcMethod,
  toQuantity,
} from "@bundlekit/core";
import type { AccessList, Address, Hash } from "viem";

/** A proposal as `builder_proposeBundle` answers it: quantities as hex, as in Ethereum's JSON-RPC. */
export interface BuilderProposalJson {
  /** What `builder_commitBundle` and `builder_releaseBundle` name. */
  id: string;
  entryPoint: Address;
  /** The block the bundle is for. */
  blockNumber: `0x${string}`;
  userOpHashes: Hash[];
  /** The account that sends the bundle transaction. */
  from: Address;
  /** The transaction to send: `to` (the EntryPoint), `data` (`handleOps`), `gas` and fees. */
  to: Address;
  data: `0x${string}`;
  gas: `0x${string}`;
  maxFeePerGas: `0x${string}`;
  maxPriorityFeePerGas: `0x${string}`;
  /** EIP-2930 access list, or null (none, or a proposal on an overridden state). */
  accessList: AccessList | null;
  /** EIP-7702 authorizations `{address, chainId, nonce, yParity, r, s}`: non-empty, send a type-4 transaction. */
  authorizationList: unknown[];
  /** Milliseconds since the epoch (the service's clock) when the claim lapses back to the pool. */
  expiresAt: number;
  /** With `sign: true`: the raw signed transaction and its hash; otherwise null. */
  signedTransaction: `0x${string}` | null;
  transactionHash: Hash | null;
}

const knownFields = new Set([
  "blockNumber",
  "timestamp",
  "baseFee",
  "gasBudget",
  "from",
  "entryPoint",
  "beneficiary",
  "sign",
  "block",
  "stateOverride",
  "blockOverride",
]);

const blockOverrideFields = [
  "number",
  "time",
  "baseFee",
  "gasLimit",
  "feeRecipient",
  "prevRandao",
] as const;

/** The builder's state a proposal names: `block` (`latest` or `pending`), `stateOverride`, `blockOverride`; undefined for none. */
function callState(request: Record<string, unknown>): CallState | undefined {
  const state: CallState = {};
  if (!isAbsent(request.block)) {
    if (request.block !== "latest" && request.block !== "pending")
      throw new InvalidParamsError("params[0].block", 'must be "latest" or "pending"');
    state.block = request.block;
  }
  if (!isAbsent(request.stateOverride))
    state.stateOverride = parseStateOverride(request.stateOverride, "params[0].stateOverride");
  if (!isAbsent(request.blockOverride)) {
    const override: BlockOverride = {};
    for (const [name, value] of Object.entries(
      parseObject(request.blockOverride, "params[0].blockOverride"),
    )) {
      const field = `params[0].blockOverride.${name}`;
      if (name === "feeRecipient") override.feeRecipient = parseAddress(value, field);
      else if (name === "prevRandao") override.prevRandao = parseHash(value, field);
      else if (name === "number" || name === "time" || name === "baseFee" || name === "gasLimit")
        override[name] = toQuantity(parseQuantity(value, field));
      else
        throw new InvalidParamsError(
          field,
          `is not a block-override field (${blockOverrideFields.join(", ")})`,
        );
    }
    state.blockOverride = override;
  }
  return Object.keys(state).length > 0 ? state : undefined;
}

function idParam(value: unknown): string {
  if (typeof value !== "string" || value.length === 0 || value.length > 100) {
    throw new InvalidParamsError(
      "params[0] (id)",
      "must be the id string builder_proposeBundle answered",
    );
  }
  return value;
}

function encodeProposal(proposal: BundleProposal, from: Address): BuilderProposalJson {
  return {
    id: proposal.id,
    entryPoint: proposal.entryPoint,
    blockNumber: toQuantity(proposal.blockNumber),
    userOpHashes: proposal.userOpHashes,
    from,
    to: proposal.to,
    data: proposal.data,
    gas: toQuantity(proposal.gas),
    maxFeePerGas: toQuantity(proposal.fees.maxFeePerGas),
    maxPriorityFeePerGas: toQuantity(proposal.fees.maxPriorityFeePerGas),
    accessList: proposal.accessList ?? null,
    authorizationList: proposal.authorizationList.map((a) => ({
      address: a.address,
      chainId: toQuantity(a.chainId),
      nonce: toQuantity(a.nonce),
      yParity: toQuantity(a.yParity ?? 0),
      r: a.r,
      s: a.s,
    })),
    expiresAt: proposal.expiresAt,
    signedTransaction: proposal.signedTransaction ?? null,
    transactionHash: proposal.transactionHash ?? null,
  };
}

/**
 * The builder API (docs/sequencer.md): `builder_proposeBundle`, `builder_commitBundle` and
 * `builder_releaseBundle`, the engine's pull calls over JSON-RPC. With `sign: true` a proposal is
 * signed by one of the service's relayers (`signer`), which is then its `from`, and which no other
 * bundle uses until the proposal is released or lapses, or its committed transaction is mined or
 * gone.
 */
export function createBuilderMethods(signer: RelayerSigner | undefined): Record<string, RpcMethod> {
  return {
    async builder_proposeBundle(params, bundler) {
      expectParams(params, 1, 1);
      const request = parseObject(params[0], "params[0] (request)");
      for (const field of Object.keys(request)) {
        if (!knownFields.has(field))
          throw new InvalidParamsError(
            `params[0].${field}`,
            `is not a field of a proposal request (${[...knownFields].join(", ")})`,
          );
      }
      const sign = isAbsent(request.sign) ? false : request.sign;
      if (typeof sign !== "boolean")
        throw new InvalidParamsError("params[0].sign", "must be true or false");
      const fields = {
        blockNumber: parseQuantity(request.blockNumber, "params[0].blockNumber", 64),
        timestamp: parseQuantity(request.timestamp, "params[0].timestamp", 64),
        baseFee: parseQuantity(request.baseFee, "params[0].baseFee"),
        gasBudget: parseQuantity(request.gasBudget, "params[0].gasBudget", 64),
        ...(isAbsent(request.entryPoint)
          ? {}
          : { entryPoint: parseAddress(request.entryPoint, "params[0].entryPoint") }),
        ...(isAbsent(request.beneficiary)
          ? {}
          : { beneficiary: parseAddress(request.beneficiary, "params[0].beneficiary") }),
        state: callState(request),
      };
      if (!sign) {
        if (isAbsent(request.from))
          throw new InvalidParamsError(
            "params[0].from",
            "is required: the account that sends the bundle (or ask the service to sign with sign: true)",
          );
        const from = parseAddress(request.from, "params[0].from");
        const proposal = await bundler.proposeBundle({ ...fields, from });
        return proposal ? encodeProposal(proposal, from) : null;
      }
      if (!isAbsent(request.from))
        throw new InvalidParamsError(
          "params[0].from",
          "must be absent with sign: true: the service's relayer sends the bundle",
        );
      if (!signer || signer.addresses.length === 0)
        throw new InvalidParamsError(
          "params[0].sign",
          "the service holds no relayer key: sign the bundle yourself (sign: false, with from)",
        );
      const lease = signer.lease();
      if (!lease)
        throw new RpcError(
          RpcErrorCode.limitExceeded,
          "every relayer of the service is busy: try again, or sign the bundle yourself",
        );
      // A proposal holds the relayer until its transaction is mined or gone, or it is released or
      // lapses: its nonce is not the node's pending one until the builder's block carries it.
      let proposal: BundleProposal | undefined;
      try {
        proposal = await bundler.proposeBundle({ ...fields, from: lease.address, signer: lease });
      } finally {
        if (!proposal) lease.release();
      }
      return proposal ? encodeProposal(proposal, lease.address) : null;
    },

    async builder_commitBundle(params, bundler) {
      expectParams(params, 1, 2);
      const id = idParam(params[0]);
      const transactionHash = isAbsent(params[1])
        ? undefined
        : parseHash(params[1], "params[1] (transactionHash)");
      await bundler.commitBundle(id, { transactionHash });
      return true;
    },

    async builder_releaseBundle(params, bundler) {
      expectParams(params, 1, 1);
      await bundler.releaseBundle(idParam(params[0]));
      return true;
    },
  };
}
