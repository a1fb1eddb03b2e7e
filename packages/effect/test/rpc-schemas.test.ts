import { Effect, Exit, Schema } from "effect";
import { describe, expect, it } from "vitest";
import { ChainIdRequest, GasEstimateFromWire, GetUserOperationByHashRequest, QuantitySchema } from "../src/rpc-schemas.ts";

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
});
