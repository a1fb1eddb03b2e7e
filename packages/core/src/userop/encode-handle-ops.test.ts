import { encodeFunctionData, getAddress, type Hex } from "viem";
import { describe, expect, it } from "vitest";
import { randomDraws, randomOperation } from "../../test/random-operations.ts";
import { createEntryPointRegistry } from "../entrypoint/registry.ts";
import { encodeHandleOps } from "./encode-handle-ops.ts";
import { toEntryPointStruct } from "./pack.ts";
import type { UserOperation } from "./types.ts";

const entryPoints = createEntryPointRegistry().all;

/** viem's encoding of the call, written out independently of the code under test. */
const withViem = (entryPoint: (typeof entryPoints)[number], ops: UserOperation[], beneficiary: Hex) =>
  encodeFunctionData({
    abi: entryPoint.abi,
    functionName: "handleOps",
    args: [ops.map((op) => toEntryPointStruct(op)), beneficiary],
  } as Parameters<typeof encodeFunctionData>[0]);

/** Some of a random bundle's addresses checksummed and some of its bytes in upper case, as callers may send them. */
function randomBundle(seed: number, entryPoint: (typeof entryPoints)[number]) {
  const r = randomDraws(seed);
  const ops = Array.from({ length: r.int(7) }, () => {
    const op = randomOperation(r, entryPoint.version === "0.6");
    if (r.int(2) === 0) op.sender = getAddress(op.sender);
    if (r.int(3) === 0) op.callData = `0x${op.callData.slice(2).toUpperCase()}`;
    return op;
  });
  const beneficiary = r.int(2) === 0 ? getAddress(r.address()) : r.address();
  return { ops, beneficiary };
}

describe("encodeHandleOps", () => {
  it("writes the bytes viem's encoder writes, in lower-case hex, for 800 random bundles of every EntryPoint version", () => {
    for (let seed = 1; seed <= 800; seed++) {
      const entryPoint = entryPoints[seed % entryPoints.length]!;
      const { ops, beneficiary } = randomBundle(seed, entryPoint);
      expect(encodeHandleOps(entryPoint, ops, beneficiary), `seed ${seed} (v${entryPoint.version})`).toBe(
        withViem(entryPoint, ops, beneficiary).toLowerCase(),
      );
    }
  });

  it("leaves what the encoder pads or refuses to the encoder: odd hex, a bad checksum, a value out of range", () => {
    for (const entryPoint of entryPoints) {
      const { ops, beneficiary } = randomBundle(entryPoint.version === "0.6" ? 11 : 12, entryPoint);
      const op = { ...randomOperation(randomDraws(5), entryPoint.version === "0.6"), callData: "0xabc" } as UserOperation;
      expect(encodeHandleOps(entryPoint, [...ops, op], beneficiary)).toBe(withViem(entryPoint, [...ops, op], beneficiary));
      const badChecksum = `0x${getAddress(beneficiary).slice(2, 41)}${beneficiary.at(-1) === "a" ? "A" : "a"}` as Hex;
      expect(() => encodeHandleOps(entryPoint, ops, badChecksum)).toThrow(/Address .* is invalid/);
      expect(() => encodeHandleOps(entryPoint, [{ ...op, callData: "0x", nonce: 1n << 256n }], beneficiary)).toThrow(/out of range|not in safe/);
    }
  });
});
