import type { Address } from "viem";
import { describe, expect, it } from "vitest";
import type { Bundle } from "./build-bundle.ts";
import { bundleTransaction } from "./bundle-transaction.ts";

const entryPoint = "0x0000000071727De22E5E9d8BAf0edAc6f37da032" as Address;
const sender = "0x1111111111111111111111111111111111111111" as Address;

/** A bundle with what the transaction is built from (its operations are irrelevant here). */
function bundle(parts: Partial<Bundle> = {}): Bundle {
  return {
    entryPoint: { address: entryPoint, version: "0.7", abi: [], simulations: undefined },
    entries: [],
    data: "0x1234",
    gas: 1_000_000n,
    authorizationList: [],
    ...parts,
  };
}

const options = { chainId: 31337, fees: { maxFeePerGas: 30n, maxPriorityFeePerGas: 2n }, gasLimitMarkupPercent: 10, maxGas: 30_000_000n };

describe("bundleTransaction", () => {
  it("calls handleOps with the bundle's gas plus the markup, and its fees", () => {
    expect(bundleTransaction(bundle(), options)).toEqual({
      chainId: 31337,
      to: entryPoint,
      data: "0x1234",
      gas: 1_100_000n,
      maxFeePerGas: 30n,
      maxPriorityFeePerGas: 2n,
      type: "eip1559",
    });
  });

  it("keeps the gas limit within maxGas", () => {
    expect(bundleTransaction(bundle(), { ...options, maxGas: 1_050_000n }).gas).toBe(1_050_000n);
  });

  it("carries the bundle's access list", () => {
    const accessList = [{ address: sender, storageKeys: [] }];
    expect(bundleTransaction(bundle({ accessList }), options)).toMatchObject({ accessList, type: "eip1559" });
  });

  it("is type 4 with the operations' EIP-7702 authorizations", () => {
    const authorization = { address: sender, chainId: 31337, nonce: 0, r: "0x01", s: "0x02", yParity: 0 } as Bundle["authorizationList"][number];
    expect(bundleTransaction(bundle({ authorizationList: [authorization] }), options)).toMatchObject({ type: "eip7702", authorizationList: [authorization] });
  });
});
