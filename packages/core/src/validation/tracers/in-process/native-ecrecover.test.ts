import { ecrecover } from "@ethereumjs/util";
import { hexToBytes, keccak256, numberToBytes, toBytes } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { nativeEcrecover } from "./native-ecrecover.ts";

/** The secp256k1 group order. */
const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const word = (value: bigint) => numberToBytes(value, { size: 32 });

/** What the EVM's own recovery answers: the key, or the error it throws. */
function both(msgHash: Uint8Array, v: bigint, r: Uint8Array, s: Uint8Array) {
  const outcome = (f: typeof ecrecover) => {
    try {
      return f(msgHash, v, r, s);
    } catch {
      return "throws";
    }
  };
  return { native: outcome(nativeEcrecover!), evm: outcome(ecrecover) };
}

describe("nativeEcrecover", () => {
  it("loads the prebuilt binding on this platform", () => {
    expect(nativeEcrecover).toBeTypeOf("function");
  });

  it("recovers the same key as the EVM's own ecrecover, for low-s and high-s signatures and both v", async () => {
    for (let i = 0; i < 20; i++) {
      const account = privateKeyToAccount(generatePrivateKey());
      const hash = keccak256(toBytes(`message ${i}`));
      const signature = hexToBytes(await account.sign({ hash }));
      const [r, s, v] = [signature.subarray(0, 32), signature.subarray(32, 64), BigInt(signature[64]!)];
      const msgHash = hexToBytes(hash);
      const ok = both(msgHash, v, r, s);
      expect(ok.native).toEqual(ok.evm);
      expect(keccak256(ok.native as Uint8Array).slice(-40)).toBe(account.address.slice(2).toLowerCase());
      // The same signature with s negated and the parity flipped: ecrecover accepts it and finds the same key.
      const high = both(msgHash, v === 27n ? 28n : 27n, r, word(n - BigInt(`0x${Buffer.from(s).toString("hex")}`)));
      expect(high.native).toEqual(high.evm);
      expect(high.native).toEqual(ok.native);
      const otherParity = both(msgHash, v === 27n ? 28n : 27n, r, s);
      expect(otherParity.native).toEqual(otherParity.evm);
    }
  });

  it("throws where the EVM's ecrecover throws: r or s zero or not below the curve order", () => {
    const msgHash = hexToBytes(keccak256(toBytes("x")));
    const one = word(1n);
    for (const [r, s] of [[word(0n), one], [one, word(0n)], [word(n), one], [one, word(n)], [word(2n ** 256n - 1n), one]] as const) {
      expect(both(msgHash, 27n, r, s)).toEqual({ native: "throws", evm: "throws" });
    }
  });
});
