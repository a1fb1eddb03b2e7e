import { type Devnet, startDevnet } from "@bundlekit/devnet";
import { createPublicClient, http, type PublicClient } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineEntryPoint } from "../src/entrypoint/registry.ts";
import type { EntryPointVersion } from "../src/entrypoint/version.ts";
import { InvalidParamsError } from "../src/errors/errors.ts";
import { fixtureEntry } from "../../testing/src/index.ts";
import { decodeUserOperation, encodeUserOperation } from "../src/userop/codec.ts";
import { getUserOperationHash } from "../src/userop/hash.ts";
import { fromPackedUserOperation, toEntryPointStruct, type PackedUserOperation } from "../src/userop/pack.ts";
import { isUserOperationV06, type UserOperation } from "../src/userop/types.ts";

/** Operations of every shape the codec, packing and hashing must agree on. */
const shapes: [string, { version: EntryPointVersion; sponsored?: boolean; eip7702?: boolean }][] = [
  ["v0.6", { version: "0.6" }],
  ["v0.6 with an EIP-7702 authorization", { version: "0.6", eip7702: true }],
  ["v0.7", { version: "0.7" }],
  ["v0.7 with an EIP-7702 authorization", { version: "0.7", eip7702: true }],
  ["v0.7 with factory and paymaster", { version: "0.7", sponsored: true }],
  ["v0.8", { version: "0.8" }],
  ["v0.8 with factory and paymaster", { version: "0.8", sponsored: true }],
  ["v0.9", { version: "0.9" }],
  ["v0.9 with factory, paymaster and paymasterSignature", { version: "0.9", sponsored: true }],
];

const paymasterFields = { paymaster: `0x${"22".repeat(20)}`, paymasterVerificationGasLimit: "0x1", paymasterPostOpGasLimit: "0x0" };

async function operation(shape: (typeof shapes)[number][1]): Promise<UserOperation> {
  return (await fixtureEntry(shape)).userOperation;
}

describe("wire codec", () => {
  it.each(shapes)("%s: decode(encode(op)) is op", async (_name, shape) => {
    const op = await operation(shape);
    expect(decodeUserOperation(encodeUserOperation(op), { version: shape.version })).toEqual(op);
  });

  it.each(shapes)("%s: {type:\"BigNumber\",hex} objects decode like hex strings", async (_name, shape) => {
    const wire = encodeUserOperation(await operation(shape));
    const objects = Object.fromEntries(
      Object.entries(wire).map(([k, v]) => [k, typeof v === "string" && /GasLimit$|^nonce$|Gas$|PerGas$/.test(k) ? { type: "BigNumber", hex: v } : v]),
    );
    expect(decodeUserOperation(objects, { version: shape.version })).toEqual(decodeUserOperation(wire, { version: shape.version }));
  });

  it("fills zeros and an empty signature for what estimation lets a client leave out", () => {
    const op = decodeUserOperation({ sender: `0x${"11".repeat(20)}`, nonce: "0x0", callData: "0x" }, { version: "0.7", mode: "estimate" });
    expect(op).toMatchObject({ callGasLimit: 0n, verificationGasLimit: 0n, preVerificationGas: 0n, maxFeePerGas: 0n, signature: "0x" });
  });

  it.each<[string, EntryPointVersion, Record<string, unknown>, string]>([
    ["a v0.7 gas limit over 128 bits", "0.7", { callGasLimit: `0x1${"0".repeat(32)}` }, "params[0].callGasLimit"],
    ["a v0.6 fee of 2^256 - 1 (its EntryPoint's AA94 allows 120 bits)", "0.6", { maxFeePerGas: `0x${"f".repeat(64)}` }, "params[0].maxFeePerGas"],
    ["a v0.6 gas limit over 120 bits", "0.6", { preVerificationGas: `0x1${"0".repeat(30)}` }, "params[0].preVerificationGas"],
    ["the EIP-7702 factory marker on v0.7 (its EntryPoint knows none)", "0.7", { factory: "0x7702", factoryData: "0x" }, "params[0].factory"],
    ["an eip7702Auth without its signature", "0.6", { eip7702Auth: { address: `0x${"11".repeat(20)}`, chainId: "0x1", nonce: "0x0", yParity: "0x0" } }, "params[0].eip7702Auth.r"],
    ["eip7702Auth with yParity 2", "0.8", { eip7702Auth: { address: `0x${"11".repeat(20)}`, chainId: "0x1", nonce: "0x0", r: "0x1", s: "0x1", yParity: "0x2" } }, "params[0].eip7702Auth.yParity"],
    ["paymasterData without paymaster", "0.7", { paymasterData: "0x12" }, "params[0].paymasterData"],
    ["paymasterSignature on v0.8", "0.8", { ...paymasterFields, paymasterSignature: "0x1234" }, "params[0].paymasterSignature"],
    ["paymasterSignature without paymaster", "0.9", { paymasterSignature: "0x1234" }, "params[0].paymasterSignature"],
    [
      "v0.9 paymasterData whose signature suffix claims more bytes than it has",
      "0.9",
      { ...paymasterFields, paymasterData: `0x1234ffff${"22e325a297439656"}` },
      "params[0].paymasterData",
    ],
  ])("refuses %s, naming the field", async (_what, version, fields, field) => {
    const wire = { ...encodeUserOperation(await operation({ version })), ...fields };
    const error = (() => {
      try {
        decodeUserOperation(wire, { version });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(InvalidParamsError);
    expect((error as InvalidParamsError).field).toBe(field);
  });
});

describe("packing and hashing agree with the EntryPoint on chain", () => {
  let devnet: Devnet;
  let client: PublicClient;
  beforeAll(async () => {
    devnet = await startDevnet();
    client = createPublicClient({ transport: http(devnet.rpcUrl) }) as PublicClient;
  });
  afterAll(() => devnet?.stop());

  it.each(shapes)("%s: getUserOperationHash equals EntryPoint.getUserOpHash", async (_name, shape) => {
    const op = await operation(shape);
    const entryPoint = defineEntryPoint(shape.version);
    const onChain = await client.readContract({
      address: entryPoint.address,
      abi: entryPoint.abi,
      functionName: "getUserOpHash",
      args: [toEntryPointStruct(op)],
    });
    expect(getUserOperationHash(op, entryPoint, devnet.chainId)).toBe(onChain);
  });

  it.each(["0.6", "0.7"] as const)("v%s: a factory at the padded EIP-7702 marker address is hashed as it is, with an authorization (only v0.8+ read the marker)", async (version) => {
    const marker = "0x7702000000000000000000000000000000000000";
    const delegated = await operation({ version, eip7702: true });
    const op: UserOperation = isUserOperationV06(delegated) ? { ...delegated, initCode: `${marker}12` as const } : { ...delegated, factory: marker, factoryData: "0x12" as const };
    const entryPoint = defineEntryPoint(version);
    const onChain = await client.readContract({ address: entryPoint.address, abi: entryPoint.abi, functionName: "getUserOpHash", args: [toEntryPointStruct(op)] });
    expect(getUserOperationHash(op, entryPoint, devnet.chainId)).toBe(onChain);
  });

  it.each(shapes.filter(([, s]) => s.version !== "0.6"))("%s: unpacking the packed struct gives the operation back (an authorization is no part of it)", async (_name, shape) => {
    const { authorization, ...op } = await operation(shape);
    expect(isUserOperationV06(op)).toBe(false);
    const unpacked = fromPackedUserOperation(toEntryPointStruct(op) as unknown as PackedUserOperation, shape.version);
    expect(unpacked).toEqual(op);
  });
});
