import { Effect, Exit, Schema } from "effect";
import { describe, expect, it } from "vitest";
import { canonicalEntryPoints } from "@bundlekit/core";
import { ChainIdRequest, GasEstimateFromWire, GetUserOperationByHashRequest, QuantitySchema, UserOperationLookupFromWire } from "../src/rpc-schemas.ts";
import { UserOperationFromWire } from "../src/schema.ts";

describe("the RPC methods' schemas", () => {
  it("reads an estimate's hex quantities as bigints and writes them back, verificationGas beside verificationGasLimit", async () => {
    const wire = { preVerificationGas: "0xc350", verificationGas: "0x186a0", verificationGasLimit: "0x186a0", callGasLimit: "0x5208", maxFeePerGas: "0x3b9aca00", maxPriorityFeePerGas: "0x1" };
    const estimate = await Effect.runPromise(Schema.decodeUnknownEffect(GasEstimateFromWire)(wire));
    expect(estimate).toEqual({ preVerificationGas: 50_000n, verificationGasLimit: 100_000n, callGasLimit: 21_000n, maxFeePerGas: 1_000_000_000n, maxPriorityFeePerGas: 1n });
    expect(await Effect.runPromise(Schema.encodeEffect(GasEstimateFromWire)(estimate))).toEqual(wire);
  });

  it("refuses a malformed parameter with a message naming it", async () => {
    const exit = await Effect.runPromiseExit(Schema.decodeUnknownEffect(GetUserOperationByHashRequest)({ jsonrpc: "2.0", id: 1, method: "eth_getUserOperationByHash", params: ["0x12"] }));
    expect(Exit.isFailure(exit)).toBe(true);
    expect(String(exit)).toMatch(/hash/);
    expect(await Effect.runPromise(Schema.decodeUnknownEffect(ChainIdRequest)({ jsonrpc: "2.0", id: "a", method: "eth_chainId" }))).toEqual({ jsonrpc: "2.0", id: "a", method: "eth_chainId" });
    expect(await Effect.runPromise(Schema.encodeEffect(QuantitySchema)(31337n))).toBe("0x7a69");
  });

  it("writes a lookup as the endpoint does and reads it back, the operation in its EntryPoint's version", async () => {
    const wire = { sender: "0x00000000000000000000000000000000000000Aa", nonce: "0x1", factory: "0x7702", callData: "0x", callGasLimit: "0x5208", verificationGasLimit: "0x186a0", preVerificationGas: "0xc350", maxFeePerGas: "0x3b9aca00", maxPriorityFeePerGas: "0x1", signature: "0x12" };
    const userOperation = await Effect.runPromise(Schema.decodeUnknownEffect(UserOperationFromWire("0.8"))(wire));
    const lookup = { userOperation, entryPoint: canonicalEntryPoints["0.8"], transactionHash: undefined, blockHash: undefined, blockNumber: undefined };
    const written = await Effect.runPromise(Schema.encodeEffect(UserOperationLookupFromWire)(lookup));
    expect(written).toMatchObject({ entryPoint: canonicalEntryPoints["0.8"], transactionHash: null, blockNumber: null, userOperation: { factory: "0x7702", nonce: "0x1" } });
    expect(await Effect.runPromise(Schema.decodeUnknownEffect(UserOperationLookupFromWire)(JSON.parse(JSON.stringify(written))))).toEqual(lookup);
  });
});
