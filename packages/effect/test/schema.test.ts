import { Effect, Exit, Schema } from "effect";
import { getAddress } from "viem";
import { describe, expect, it } from "vitest";
import { UserOperationFromWire } from "../src/schema.ts";

const wire = {
  sender: "0x00000000000000000000000000000000000000Aa",
  nonce: "0x1",
  callData: "0x",
  callGasLimit: "0x5208",
  verificationGasLimit: "0x186a0",
  preVerificationGas: "0xc350",
  maxFeePerGas: "0x3b9aca00",
  maxPriorityFeePerGas: "0x3b9aca00",
  signature: "0x1234",
};

describe("UserOperationFromWire", () => {
  it("decodes the JSON-RPC form of a v0.7 operation to its domain form, and encodes it back", async () => {
    const schema = UserOperationFromWire("0.7");
    const op = await Effect.runPromise(Schema.decodeUnknownEffect(schema)(wire));
    expect(op).toMatchObject({ sender: getAddress(wire.sender), nonce: 1n, callGasLimit: 21_000n, maxFeePerGas: 1_000_000_000n, signature: "0x1234" });
    const back = await Effect.runPromise(Schema.encodeEffect(schema)(op));
    expect(back).toMatchObject({ sender: getAddress(wire.sender), nonce: "0x1", callGasLimit: "0x5208", signature: "0x1234" });
  });

  it("fails decoding with the codec's message naming the bad field", async () => {
    const { nonce: _, ...withoutNonce } = wire;
    const exit = await Effect.runPromiseExit(Schema.decodeUnknownEffect(UserOperationFromWire("0.7"))(withoutNonce));
    expect(Exit.isFailure(exit)).toBe(true);
    expect(String(exit)).toContain("userOperation.nonce");
  });

  it("takes an estimate's operation without gas fields or signature only in estimate mode", async () => {
    const { signature: _, callGasLimit: __, ...bare } = wire;
    expect(Exit.isFailure(await Effect.runPromiseExit(Schema.decodeUnknownEffect(UserOperationFromWire("0.7"))(bare)))).toBe(true);
    const op = await Effect.runPromise(Schema.decodeUnknownEffect(UserOperationFromWire("0.7", "estimate"))(bare));
    expect(op).toMatchObject({ callGasLimit: 0n, signature: "0x" });
  });

  it("reads v0.6's initCode and paymasterAndData", async () => {
    const v06 = { ...wire, initCode: "0x", paymasterAndData: "0x" };
    const op = await Effect.runPromise(Schema.decodeUnknownEffect(UserOperationFromWire("0.6"))(v06));
    expect(op).toMatchObject({ initCode: "0x", paymasterAndData: "0x" });
  });
});
