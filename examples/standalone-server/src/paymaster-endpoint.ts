import {
  type Bundler,
  decodeUserOperation,
  type EntryPointVersion,
  expectParams,
  InvalidParamsError,
  parseAddress,
  parseQuantity,
  type RpcMethod,
  toQuantity,
  type UserOperation,
} from "@bundlekit/core";
import { verifyingPaymasterData } from "@bundlekit/devnet";
import { type Address, concat, encodeAbiParameters, type Hex, keccak256, type PublicClient, stringToHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";

/** An ERC-7677 paymaster endpoint: who sponsors, and with which key. */
export interface PaymasterEndpointConfig {
  /** The verifying paymaster (the EntryPoint samples' contract) per EntryPoint version; versions absent are not sponsored. */
  paymasters: Partial<Record<EntryPointVersion, Address>>;
  /** The key the paymasters trust. A secret: never logged, never in `bundler_config`. */
  signerKey: Hex;
  /** Seconds a signed sponsorship stays valid, from the latest block's time. Default 600. */
  validForSeconds?: number;
}

/** Gas the verifying paymaster's validation may use: a signature recovery and a few reads. */
const verificationGasLimit = 100_000n;
/**
 * A well-formed signature by no one the paymaster trusts, for estimation: its validation runs in
 * full (an `ecrecover` that succeeds) and only reports a signature mismatch, which estimation
 * ignores; a malformed one would revert.
 */
const stubSignature = privateKeyToAccount(keccak256(stringToHex("bundlekit paymaster stub"))).signMessage({ message: "stub" });

/**
 * `pm_getPaymasterStubData` and `pm_getPaymasterData` (ERC-7677) for verifying paymasters: the
 * stub has the shape and gas of the real data, for estimation; the data is signed for the
 * operation as it will be sent. Only for the EntryPoints this service serves and its own chain;
 * anything else is -32602.
 */
export function createPaymasterMethods(client: PublicClient, config: PaymasterEndpointConfig): Record<string, RpcMethod> {
  /** The request's operation and where it may be sponsored, checked. */
  function request(params: readonly unknown[], bundler: Bundler) {
    expectParams(params, 3, 4);
    const entryPoint = bundler.entryPoints.get(parseAddress(params[1], "params[1] (entryPoint)"));
    const chainId = parseQuantity(params[2], "params[2] (chainId)");
    if (chainId !== BigInt(bundler.chainId)) {
      throw new InvalidParamsError("params[2] (chainId)", `this endpoint sponsors only on chain ${bundler.chainId}, not ${chainId}`);
    }
    const paymaster = config.paymasters[entryPoint.version];
    if (!paymaster) throw new InvalidParamsError("params[1] (entryPoint)", `no paymaster sponsors operations on EntryPoint v${entryPoint.version} here`);
    const op = decodeUserOperation(params[0], { version: entryPoint.version, mode: "estimate" });
    return { op, version: entryPoint.version, paymaster };
  }

  return {
    async pm_getPaymasterStubData(params, bundler) {
      const { version, paymaster } = request(params, bundler);
      const data = concat([encodeAbiParameters([{ type: "uint48" }, { type: "uint48" }], [0, 0]), await stubSignature]);
      const sponsor = { name: "Bundlekit verifying paymaster" };
      if (version === "0.6") return { paymasterAndData: concat([paymaster, data]), sponsor, isFinal: false };
      return {
        paymaster,
        paymasterData: data,
        paymasterVerificationGasLimit: toQuantity(verificationGasLimit),
        paymasterPostOpGasLimit: toQuantity(0n),
        sponsor,
        isFinal: false,
      };
    },

    async pm_getPaymasterData(params, bundler) {
      const { op, version, paymaster } = request(params, bundler);
      const latest = await client.getBlock({ blockTag: "latest" });
      const withLimits = (
        version === "0.6" || !("callGasLimit" in op)
          ? op
          : {
              ...op,
              paymasterVerificationGasLimit: (op as { paymasterVerificationGasLimit?: bigint }).paymasterVerificationGasLimit ?? verificationGasLimit,
              paymasterPostOpGasLimit: (op as { paymasterPostOpGasLimit?: bigint }).paymasterPostOpGasLimit ?? 0n,
            }
      ) as UserOperation;
      const data = await verifyingPaymasterData({
        client,
        version,
        paymaster,
        userOperation: withLimits as never,
        validUntil: Number(latest.timestamp) + (config.validForSeconds ?? 600),
        signerKey: config.signerKey,
      });
      return version === "0.6" ? { paymasterAndData: data } : { paymaster, paymasterData: data };
    },
  };
}
