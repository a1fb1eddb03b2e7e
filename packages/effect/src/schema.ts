import {
  decodeUserOperation,
  type EntryPointVersion,
  encodeUserOperation,
  type UserOperation,
} from "@bundlekit/core";
import { Effect, Schema, SchemaGetter, SchemaIssue } from "effect";

/**
 * A user operation in domain form (bigints, viem's `Address` and `Hex`, per EntryPoint version),
 * as the `Bundler` service takes it. Checked only as an object with a `sender`: build one from the
 * wire with `UserOperationFromWire`.
 */
export const UserOperationSchema = Schema.declare(
  (input: unknown): input is UserOperation => typeof input === "object" && input !== null && "sender" in input,
  { identifier: "UserOperation" },
);

/**
 * A user operation in its JSON-RPC form for EntryPoint `version` ↔ its domain form, by core's
 * codec (`decodeUserOperation`, `encodeUserOperation`): the same fields, checks and messages as
 * the JSON-RPC endpoint. `mode: "estimate"` lets the gas fields and the signature be absent, as
 * `eth_estimateUserOperationGas` does. A bad field fails decoding with an issue whose message names
 * it below `path` (`invalid userOperation.nonce: is required`; the request schemas give `params[0]`).
 */
export const UserOperationFromWire = (version: EntryPointVersion, mode: "send" | "estimate" = "send", path = "userOperation") =>
  Schema.Record(Schema.String, Schema.Unknown).pipe(
    Schema.decodeTo(UserOperationSchema, {
      decode: SchemaGetter.transformEffect((wire, options) =>
        Effect.try({
          try: () => decodeUserOperation(wire, { version, mode, path }),
          catch: (error) => new SchemaIssue.InvalidValue({ message: error instanceof Error ? error.message : String(error) }, wire, options),
        }),
      ),
      encode: SchemaGetter.transform((op: UserOperation): Record<string, unknown> => encodeUserOperation(op)),
    }),
  );
