import {
  canonicalEntryPoints,
  type EntryPointVersion,
  encodeGasEstimate,
  encodeUserOperationLookup,
  encodeUserOperationReceipt,
  type GasEstimate,
  parseAddress,
  parseHash,
  parseQuantity,
  toQuantity,
  type UserOperationLookup,
  type UserOperationReceipt,
} from "@bundlekit/core";
import { Effect, Schema, SchemaGetter, SchemaIssue } from "effect";
import { type Address, type Hash, zeroAddress } from "viem";
import { formatUserOperationReceipt, type RpcUserOperationReceipt } from "viem/account-abstraction";
import { UserOperationFromWire } from "./schema.ts";

/** Run one of core's parsers as a decoding step: its `InvalidParamsError` message (naming the field) becomes the issue's. */
const parsed = <A>(parse: (input: string) => A) =>
  SchemaGetter.transformEffect((input: string, options) =>
    Effect.try({
      try: () => parse(input),
      catch: (error) => new SchemaIssue.InvalidValue({ message: error instanceof Error ? error.message : String(error) }, input, options),
    }),
  );

/** An address: 20 bytes of hex, checksummed or lower case, as viem's `Address`. */
export const AddressSchema = Schema.String.pipe(
  Schema.decodeTo(Schema.declare((input: unknown): input is Address => typeof input === "string", { identifier: "Address" }), {
    decode: parsed((text) => parseAddress(text, "address")),
    encode: SchemaGetter.transform((address: Address): string => address),
  }),
);

/** A 32-byte hash, as viem's `Hash`. */
export const HashSchema = Schema.String.pipe(
  Schema.decodeTo(Schema.declare((input: unknown): input is Hash => typeof input === "string", { identifier: "Hash" }), {
    decode: parsed((text) => parseHash(text, "hash")),
    encode: SchemaGetter.transform((hash: Hash): string => hash),
  }),
);

/** A hex quantity (`0x1f`) ↔ a bigint. */
export const QuantitySchema = Schema.String.pipe(
  Schema.decodeTo(Schema.BigInt, {
    decode: parsed((text) => parseQuantity(text, "quantity")),
    encode: SchemaGetter.transform((value: bigint): string => toQuantity(value)),
  }),
);

/** A value in domain form, checked only as an object: its wire schema does the checking. */
const domain = <A>(identifier: string) =>
  Schema.declare((input: unknown): input is A => typeof input === "object" && input !== null, { identifier });

/** A JSON object as the endpoint writes it: the `FromWire` schemas below turn it into the domain form with the engine's own codec. */
const WireObject = Schema.Record(Schema.String, Schema.Unknown);

/** A result between its JSON-RPC form and its domain form: `decode` reads the wire, `encode` is the endpoint's own encoder. */
const fromWire = <A>(identifier: string, decode: (wire: Record<string, unknown>) => A, encode: (value: A) => unknown) =>
  WireObject.pipe(
    Schema.decodeTo(domain<A>(identifier), {
      decode: SchemaGetter.transformEffect((wire: Record<string, unknown>, options) =>
        Effect.try({
          try: () => decode(wire),
          catch: (error) => new SchemaIssue.InvalidValue({ message: error instanceof Error ? error.message : String(error) }, wire, options),
        }),
      ),
      encode: SchemaGetter.transform((value: A) => encode(value) as Record<string, unknown>),
    }),
  );

const quantity = (wire: Record<string, unknown>, name: string) => parseQuantity(wire[name], name);

/** The version of a canonical EntryPoint; for another, the form of the operation (`initCode`: v0.6, else v0.8). */
function versionOf(entryPoint: Address, userOperation: unknown): EntryPointVersion {
  const canonical = (Object.entries(canonicalEntryPoints) as [EntryPointVersion, Address][]).find(([, address]) => address.toLowerCase() === entryPoint.toLowerCase());
  if (canonical) return canonical[0];
  return typeof userOperation === "object" && userOperation !== null && "initCode" in userOperation ? "0.6" : "0.8";
}

/**
 * `eth_estimateUserOperationGas`'s result: hex quantities (`preVerificationGas`,
 * `verificationGasLimit` and its alias `verificationGas`, `callGasLimit`, the paymaster's limits
 * on v0.7 and later, the fees) ↔ the engine's `GasEstimate`.
 */
export const GasEstimateFromWire = fromWire<GasEstimate>(
  "GasEstimate",
  (wire) => ({
    preVerificationGas: quantity(wire, "preVerificationGas"),
    verificationGasLimit: quantity(wire, "verificationGasLimit"),
    callGasLimit: quantity(wire, "callGasLimit"),
    ...(wire.paymasterVerificationGasLimit === undefined ? {} : { paymasterVerificationGasLimit: quantity(wire, "paymasterVerificationGasLimit") }),
    ...(wire.paymasterPostOpGasLimit === undefined ? {} : { paymasterPostOpGasLimit: quantity(wire, "paymasterPostOpGasLimit") }),
    maxFeePerGas: quantity(wire, "maxFeePerGas"),
    maxPriorityFeePerGas: quantity(wire, "maxPriorityFeePerGas"),
  }),
  encodeGasEstimate,
);

/**
 * `eth_getUserOperationByHash`'s result (unknown hash: `null` on the wire): the operation in its
 * EntryPoint version's form, the EntryPoint, and once included the transaction, block hash and
 * number ↔ the engine's `UserOperationLookup`.
 */
export const UserOperationLookupFromWire = fromWire<UserOperationLookup>(
  "UserOperationLookup",
  (wire) => {
    const entryPoint = parseAddress(wire.entryPoint, "entryPoint");
    const userOperation = Schema.decodeUnknownSync(UserOperationFromWire(versionOf(entryPoint, wire.userOperation), "send", "userOperation"))(wire.userOperation);
    const optional = <A>(name: string, parse: (value: unknown, at: string) => A) => (wire[name] == null ? undefined : parse(wire[name], name));
    return {
      userOperation,
      entryPoint,
      transactionHash: optional("transactionHash", parseHash),
      blockHash: optional("blockHash", parseHash),
      blockNumber: optional("blockNumber", parseQuantity),
    };
  },
  (lookup) => encodeUserOperationLookup(lookup),
);

/**
 * `eth_getUserOperationReceipt`'s result (not yet included: `null` on the wire): the event's
 * fields, the operation's logs and the transaction's receipt ↔ the engine's `UserOperationReceipt`
 * (viem's, with bigints; read by viem's `formatUserOperationReceipt`).
 */
export const UserOperationReceiptFromWire = fromWire<UserOperationReceipt>(
  "UserOperationReceipt",
  (wire) => {
    const receipt = formatUserOperationReceipt(wire as unknown as RpcUserOperationReceipt);
    const transaction = wire.receipt as Record<string, unknown>;
    return {
      ...receipt,
      paymaster: receipt.paymaster ?? zeroAddress,
      ...(typeof wire.reason === "string" ? { reason: wire.reason } : {}),
      receipt: { ...receipt.receipt, confirmations: transaction.confirmations == null ? 1n : quantity(transaction, "confirmations") },
    };
  },
  (receipt) => encodeUserOperationReceipt(receipt),
);

/** A JSON-RPC request id. */
export const RequestId = Schema.Union([Schema.Number, Schema.String]);

/** The JSON-RPC request of `method` with positional `params`. */
const request = <const M extends string, P extends Schema.Top>(method: M, params: P) =>
  Schema.Struct({ jsonrpc: Schema.Literal("2.0"), id: RequestId, method: Schema.Literal(method), params });

/** The JSON-RPC answer holding `result`. */
const response = <R extends Schema.Top>(result: R) => Schema.Struct({ jsonrpc: Schema.Literal("2.0"), id: RequestId, result });

/** No parameters: `params` absent or `[]`. */
const NoParams = Schema.optionalKey(Schema.Tuple([]));

/**
 * `eth_sendUserOperation`'s request for an EntryPoint of version 0.7 and later (`factory`,
 * `paymaster…` fields): the user operation, decoded to its domain form by
 * `UserOperationFromWire("0.7")`, and the EntryPoint's address.
 */
export const SendUserOperationRequest = request("eth_sendUserOperation", Schema.Tuple([UserOperationFromWire("0.7", "send", "params[0]"), AddressSchema]));
/** `eth_sendUserOperation`'s answer: the operation's hash. */
export const SendUserOperationResponse = response(HashSchema);

/** `eth_estimateUserOperationGas`'s request (v0.7 and later): the operation, its gas fields and signature optional, and the EntryPoint. */
export const EstimateUserOperationGasRequest = request("eth_estimateUserOperationGas", Schema.Tuple([UserOperationFromWire("0.7", "estimate", "params[0]"), AddressSchema]));
/** `eth_estimateUserOperationGas`'s answer: the estimate as hex quantities. */
export const EstimateUserOperationGasResponse = response(GasEstimateFromWire);

/** `eth_getUserOperationByHash`'s request: the operation's hash. */
export const GetUserOperationByHashRequest = request("eth_getUserOperationByHash", Schema.Tuple([HashSchema]));
/** `eth_getUserOperationByHash`'s answer: the operation and where it is, `null` for an unknown hash. */
export const GetUserOperationByHashResponse = response(Schema.NullOr(UserOperationLookupFromWire));

/** `eth_getUserOperationReceipt`'s request: the operation's hash. */
export const GetUserOperationReceiptRequest = request("eth_getUserOperationReceipt", Schema.Tuple([HashSchema]));
/** `eth_getUserOperationReceipt`'s answer: the receipt, `null` until the operation is included. */
export const GetUserOperationReceiptResponse = response(Schema.NullOr(UserOperationReceiptFromWire));

/** `eth_supportedEntryPoints`'s request: no parameters. */
export const SupportedEntryPointsRequest = Schema.Struct({ jsonrpc: Schema.Literal("2.0"), id: RequestId, method: Schema.Literal("eth_supportedEntryPoints"), params: NoParams });
/** `eth_supportedEntryPoints`'s answer: the EntryPoints' addresses. */
export const SupportedEntryPointsResponse = response(Schema.Array(AddressSchema));

/** `eth_chainId`'s request: no parameters. */
export const ChainIdRequest = Schema.Struct({ jsonrpc: Schema.Literal("2.0"), id: RequestId, method: Schema.Literal("eth_chainId"), params: NoParams });
/** `eth_chainId`'s answer: the chain id as a hex quantity. */
export const ChainIdResponse = response(QuantitySchema);
