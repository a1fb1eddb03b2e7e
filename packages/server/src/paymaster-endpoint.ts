import {
  type Bundler,
  decodeUserOperation,
  type EntryPointVersion,
  expectParams,
  InvalidParamsError,
  isUserOperationV06,
  parseAddress,
  parseQuantity,
  RpcError,
  RpcErrorCode,
  type RpcMethod,
  type RpcRequestContext,
  toQuantity,
  type UserOperation,
} from "@bundlekit/core";
import { verifyingPaymasterData } from "@bundlekit/devnet";
import { privateKeyProblem } from "@bundlekit/signer-relayer";
import {
  type Address,
  concat,
  encodeAbiParameters,
  type Hex,
  keccak256,
  type PublicClient,
  stringToHex,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { ConfigError } from "./config-values.ts";
import { defaultValidForSeconds } from "./sponsorship/configured-policy.ts";
import type { SponsorshipPolicy, SponsorshipRequest } from "./sponsorship/policy.ts";

/** An ERC-7677 paymaster endpoint: who sponsors, with which key, and for whom. */
export interface PaymasterEndpointConfig {
  /** The verifying paymaster (the EntryPoint samples' contract) per EntryPoint version; versions absent are not sponsored. */
  paymasters: Partial<Record<EntryPointVersion, Address>>;
  /** The key the paymasters trust. A secret: never logged, never in `bundler_config`. */
  signerKey: Hex;
  /** Decides every request before anything is signed (see `createConfiguredSponsorshipPolicy`). */
  policy: SponsorshipPolicy;
  /** Seconds a signed sponsorship stays valid, from the latest block's time. Default 90. */
  validForSeconds?: number | undefined;
}

/** Gas the verifying paymaster's validation may use: a signature recovery and a few reads. */
const verificationGasLimit = 100_000n;
/**
 * A well-formed signature by no one the paymaster trusts, for estimation: its validation runs in
 * full (an `ecrecover` that succeeds) and only reports a signature mismatch, which estimation
 * ignores; a malformed one would revert.
 */
const stubSignature = privateKeyToAccount(
  keccak256(stringToHex("bundlekit paymaster stub")),
).signMessage({ message: "stub" });

/**
 * The API key a request presents: the `x-api-key` header, else the URL's `apikey` query parameter
 * (what viem's `http(url)` transport can carry). Undefined when neither is there.
 */
export function apiKeyOf(request: RpcRequestContext): string | undefined {
  const header = request.headers?.["x-api-key"];
  if (typeof header === "string" && header !== "") return header;
  const url = request.url ?? "";
  const query = url.indexOf("?");
  return query < 0
    ? undefined
    : (new URLSearchParams(url.slice(query + 1)).get("apikey") ?? undefined);
}

/**
 * `pm_getPaymasterStubData` and `pm_getPaymasterData` (ERC-7677) for verifying paymasters: the
 * stub has the shape and gas of the real data, for estimation; the data is signed for the
 * operation as it will be sent, valid for `validForSeconds`. Only for the EntryPoints this
 * service serves and its own chain (else -32602), and only what `config.policy` allows (else
 * -32001, naming the cap and its limit). A signer key that is no secp256k1 private key throws a
 * `ConfigError` at once, never naming the key.
 */
export function createPaymasterMethods(
  client: PublicClient,
  config: PaymasterEndpointConfig,
): Record<string, RpcMethod> {
  // Checked here, at start, so a bad key fails once with a clear line rather than on each request.
  const problem = privateKeyProblem(config.signerKey);
  if (problem) throw new ConfigError(`the paymaster signer key ${problem}`);
  /** The request checked, and the operation as it will be signed, once the policy allows it. */
  async function sponsored(
    method: SponsorshipRequest["method"],
    params: readonly unknown[],
    bundler: Bundler,
    request: RpcRequestContext = {},
  ) {
    expectParams(params, 3, 4);
    const entryPoint = bundler.entryPoints.get(parseAddress(params[1], "params[1] (entryPoint)"));
    const chainId = parseQuantity(params[2], "params[2] (chainId)");
    if (chainId !== BigInt(bundler.chainId)) {
      throw new InvalidParamsError(
        "params[2] (chainId)",
        `this endpoint sponsors only on chain ${bundler.chainId}, not ${chainId}`,
      );
    }
    const paymaster = config.paymasters[entryPoint.version];
    if (!paymaster)
      throw new InvalidParamsError(
        "params[1] (entryPoint)",
        `no paymaster sponsors operations on EntryPoint v${entryPoint.version} here`,
      );
    const context = params[3] ?? {};
    if (typeof context !== "object" || Array.isArray(context))
      throw new InvalidParamsError("params[3] (context)", "must be an object");
    const op = withPaymaster(
      decodeUserOperation(params[0], { version: entryPoint.version, mode: "estimate" }),
      paymaster,
    );
    const decision = await config.policy({
      method,
      userOperation: op,
      entryPoint: { address: entryPoint.address, version: entryPoint.version },
      paymaster,
      chainId: bundler.chainId,
      apiKey: apiKeyOf(request),
      context: context as Record<string, unknown>,
      request,
    });
    if (!decision.sponsor)
      throw new RpcError(
        RpcErrorCode.sponsorshipRefused,
        `sponsorship refused: ${decision.reason}`,
        decision.data,
      );
    return { op, version: entryPoint.version, paymaster };
  }

  return {
    async pm_getPaymasterStubData(params, bundler, request) {
      const { version, paymaster } = await sponsored(
        "pm_getPaymasterStubData",
        params,
        bundler,
        request,
      );
      const data = concat([
        encodeAbiParameters([{ type: "uint48" }, { type: "uint48" }], [0, 0]),
        await stubSignature,
      ]);
      const sponsor = { name: "Bundlekit verifying paymaster" };
      if (version === "0.6")
        return { paymasterAndData: concat([paymaster, data]), sponsor, isFinal: false };
      return {
        paymaster,
        paymasterData: data,
        paymasterVerificationGasLimit: toQuantity(verificationGasLimit),
        paymasterPostOpGasLimit: toQuantity(0n),
        sponsor,
        isFinal: false,
      };
    },

    async pm_getPaymasterData(params, bundler, request) {
      const { op, version, paymaster } = await sponsored(
        "pm_getPaymasterData",
        params,
        bundler,
        request,
      );
      const latest = await client.getBlock({ blockTag: "latest" });
      const data = await verifyingPaymasterData({
        client,
        version,
        paymaster,
        userOperation: op,
        validUntil: Number(latest.timestamp) + (config.validForSeconds ?? defaultValidForSeconds),
        signerKey: config.signerKey,
      });
      return version === "0.6" ? { paymasterAndData: data } : { paymaster, paymasterData: data };
    },
  };
}

/**
 * The operation as the paymaster will sign it: v0.6 with `paymasterAndData` naming the paymaster
 * (so its max cost reserves verification gas three times, as the EntryPoint does); v0.7+ with the
 * paymaster and its gas limits, the caller's where given.
 */
function withPaymaster(op: UserOperation, paymaster: Address): UserOperation {
  if (isUserOperationV06(op)) return { ...op, paymasterAndData: paymaster };
  return {
    ...op,
    paymaster,
    paymasterVerificationGasLimit: op.paymasterVerificationGasLimit ?? verificationGasLimit,
    paymasterPostOpGasLimit: op.paymasterPostOpGasLimit ?? 0n,
  };
}
