import { encodeFunctionData, type Hex, hexToBytes } from "viem";
import { describe, expect, it } from "vitest";
import { randomDraws, randomOperation } from "../../test/random-operations.ts";
import { createEntryPointRegistry } from "../entrypoint/registry.ts";
import { decodeHandleOps, decodeHandleOpsWithAbi } from "./decode-handle-ops.ts";
import { toEntryPointStruct } from "./pack.ts";
import type { UserOperationV07 } from "./types.ts";

const entryPoints = createEntryPointRegistry().all.filter((e) => e.version !== "0.6");

/** `handleOps` calldata of a few random v0.7+ operations, as the engine encodes a bundle. */
function randomBundle(seed: number, entryPoint: (typeof entryPoints)[number]): Hex {
  const r = randomDraws(seed);
  const ops = Array.from({ length: r.int(6) }, () => randomOperation(r, false) as UserOperationV07);
  return encodeFunctionData({
    abi: entryPoint.abi,
    functionName: "handleOps",
    args: [ops.map((op) => toEntryPointStruct(op)), r.address()],
  } as Parameters<typeof encodeFunctionData>[0]);
}

describe("decodeHandleOps", () => {
  it("reads v0.7+ bundles as viem's ABI decoder does, for 600 random bundles", () => {
    for (let seed = 1; seed <= 600; seed++) {
      const entryPoint = entryPoints[seed % entryPoints.length]!;
      const data = randomBundle(seed, entryPoint);
      const ops = decodeHandleOps(entryPoint, data);
      expect(ops, `seed ${seed} (v${entryPoint.version})`).toEqual(
        decodeHandleOpsWithAbi(entryPoint, data),
      );
      expect(decodeHandleOps(entryPoint, hexToBytes(data)), `seed ${seed} (v${entryPoint.version}), from bytes`).toEqual(ops);
    }
  });

  it("finds no operations in calldata cut short or of another call, as before", () => {
    const entryPoint = entryPoints[0]!;
    let data = randomBundle(3, entryPoint);
    while (decodeHandleOpsWithAbi(entryPoint, data).length === 0)
      data = randomBundle(Number.parseInt(data.slice(-4), 16), entryPoint);
    expect(decodeHandleOps(entryPoint, data).length).toBeGreaterThan(0);
    expect(decodeHandleOps(entryPoint, data.slice(0, -64) as Hex)).toEqual([]);
    expect(decodeHandleOps(entryPoint, `0x12345678${data.slice(10)}`)).toEqual([]);
    expect(decodeHandleOps(entryPoint, hexToBytes(data).subarray(0, -32))).toEqual([]);
  });

  it("reads calldata that is a view in the middle of a transaction's bytes", () => {
    const entryPoint = entryPoints[1]!;
    const data = randomBundle(7, entryPoint);
    const framed = new Uint8Array([0xaa, ...hexToBytes(data), 0xbb]);
    expect(decodeHandleOps(entryPoint, framed.subarray(1, -1))).toEqual(decodeHandleOpsWithAbi(entryPoint, data));
  });

  it("reads uppercase hex as viem's ABI decoder does, and declines what is not hex", () => {
    const entryPoint = entryPoints[0]!;
    const data = randomBundle(11, entryPoint);
    expect(decodeHandleOps(entryPoint, `0x${data.slice(2).toUpperCase()}`)).toEqual(decodeHandleOpsWithAbi(entryPoint, data));
    expect(decodeHandleOps(entryPoint, `${data.slice(0, -2)}zz` as Hex)).toEqual([]);
  });
});
