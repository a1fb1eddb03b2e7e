import { Effect, Schema } from "effect";
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiSchema,
} from "effect/http-api";
import { type Address, type Hash, isAddress } from "viem";
import { Bundler } from "./bundler.ts";
import { BundlekitErrorSchema } from "./errors.ts";
import { UserOperationFromWire } from "./schema.ts";

/** A checksummed or lower-case 20-byte address, as viem's `Address`. */
const AddressSchema = Schema.declare(
  (input: unknown): input is Address =>
    typeof input === "string" && isAddress(input, { strict: false }),
  {
    identifier: "Address",
  },
);

/** A JSON-RPC request id. */
const RequestId = Schema.Union([Schema.Number, Schema.String]);

/**
 * The JSON-RPC body of `eth_sendUserOperation` for an EntryPoint of version 0.7 and later
 * (`factory`, `paymaster…` fields): `params` is the user operation, decoded to its domain form by
 * `UserOperationFromWire("0.7")`, and the EntryPoint's address.
 */
export const SendUserOperationRequest = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: RequestId,
  method: Schema.Literal("eth_sendUserOperation"),
  params: Schema.Tuple([UserOperationFromWire("0.7"), AddressSchema]),
});

/** The JSON-RPC answer of `eth_sendUserOperation`: the operation's hash. */
export const SendUserOperationResponse = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: RequestId,
  result: Schema.String,
});

/**
 * An `HttpApi` group built from the package's schemas: `POST /eth_sendUserOperation` takes the
 * JSON-RPC body of `eth_sendUserOperation` and answers its JSON-RPC result. `HttpApi` routes by
 * path and method, not by a body's `method`, so this is one endpoint per JSON-RPC method rather
 * than JSON-RPC's single endpoint; a refusal answers 400 with the tagged error encoded
 * (`{ _tag, code, message, data }`, `BundlekitErrorSchema`), not JSON-RPC's error envelope.
 */
export const BundlerApiGroup = HttpApiGroup.make("bundler").add(
  HttpApiEndpoint.post("sendUserOperation", "/eth_sendUserOperation", {
    payload: SendUserOperationRequest,
    success: SendUserOperationResponse,
    error: BundlekitErrorSchema.pipe(HttpApiSchema.status(400)),
  }),
);

/** An `HttpApi` holding `BundlerApiGroup` alone; add the group to an API of your own instead to serve it beside your endpoints. */
export const BundlerApi = HttpApi.make("bundlekit").add(BundlerApiGroup);

/** The handlers of `BundlerApiGroup` in `BundlerApi`, on the `Bundler` service. */
export const BundlerApiHandlers = HttpApiBuilder.group(BundlerApi, "bundler", (handlers) =>
  handlers.handle("sendUserOperation", ({ payload }) =>
    Effect.gen(function* () {
      const bundler = yield* Bundler;
      const hash: Hash = yield* bundler.sendUserOperation(payload.params[0], payload.params[1]);
      return { jsonrpc: "2.0" as const, id: payload.id, result: hash };
    }),
  ),
);
