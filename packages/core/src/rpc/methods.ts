import type { Bundler } from "../engine/create-bundler.ts";
import { InvalidParamsError } from "../errors/errors.ts";
import { type DecodeMode, decodeUserOperation } from "../userop/codec.ts";
import { parseAddress, parseBlock, parseHash, parseInteger, toQuantity } from "../userop/wire.ts";
import { parseStateOverride } from "../validation/state-override.ts";
import { bundlerConfigMethod } from "./bundler-config.ts";
import { encodeFeeHistory, encodeGasEstimate, encodeGasPrice, encodeUserOperationLookup, encodeUserOperationReceipt } from "./encode.ts";

/**
 * What a transport knows of the request a method answers, for methods that authenticate their
 * caller (e.g. an API key in the URL or a header). Empty when the handler is called without one.
 */
export interface RpcRequestContext {
  /** The request's path and query as sent, e.g. `/v1/1/?apikey=…` (over WebSocket: the upgrade's). */
  url?: string | undefined;
  /** The HTTP headers (over WebSocket: the upgrade's), names in lower case. */
  headers?: Readonly<Record<string, string | readonly string[] | undefined>>;
}

/**
 * One JSON-RPC method: positional params in, JSON result out. Errors are thrown domain errors (`BundlerError`), or `RpcError`s for the protocol's own.
 * `request` says where the call came from; the standard methods ignore it.
 */
export type RpcMethod = (params: readonly unknown[], bundler: Bundler, request?: RpcRequestContext) => Promise<unknown>;

/** The version string `web3_clientVersion` answers. */
export const clientVersion = "bundlekit/0.1.0";

/** Throws -32602 unless there are `min` to `max` positional params. */
export function expectParams(params: readonly unknown[], min: number, max: number) {
  if (params.length < min || params.length > max) {
    const expected = min === max ? `${min}` : `${min} to ${max}`;
    throw new InvalidParamsError("params", `expected ${expected} parameters, got ${params.length}`);
  }
}

function userOperationAndEntryPoint(params: readonly unknown[], bundler: Bundler, mode: DecodeMode) {
  const entryPoint = bundler.entryPoints.get(parseAddress(params[1], "params[1] (entryPoint)"));
  const op = decodeUserOperation(params[0], { version: entryPoint.version, mode });
  return { op, entryPoint: entryPoint.address };
}

/** A lookup's hash; the message keeps the wording ERC-4337 compatibility suites match on. */
function userOpHashParam(params: readonly unknown[]) {
  if (params.length > 1) expectParams(params, 1, 1);
  try {
    return parseHash(params[0], "params[0] (userOpHash)");
  } catch (error) {
    const reason = error instanceof InvalidParamsError ? error.problem : String(error);
    throw new InvalidParamsError("params[0] (userOpHash)", reason, "Missing/invalid userOpHash");
  }
}

/** The standard ERC-4337 methods (ERC-7769) and the service's own. */
export const rpcMethods: Record<string, RpcMethod> = {
  async eth_sendUserOperation(params, bundler) {
    expectParams(params, 2, 2);
    const { op, entryPoint } = userOperationAndEntryPoint(params, bundler, "send");
    return bundler.sendUserOperation(op, entryPoint);
  },
  async eth_estimateUserOperationGas(params, bundler) {
    expectParams(params, 2, 3);
    const { op, entryPoint } = userOperationAndEntryPoint(params, bundler, "estimate");
    const stateOverride = params[2] == null ? undefined : parseStateOverride(params[2], "params[2] (stateOverride)");
    return encodeGasEstimate(await bundler.estimateUserOperationGas(op, entryPoint, stateOverride));
  },
  async eth_getUserOperationByHash(params, bundler) {
    return encodeUserOperationLookup(await bundler.getUserOperationByHash(userOpHashParam(params)));
  },
  async eth_getUserOperationReceipt(params, bundler) {
    return encodeUserOperationReceipt(await bundler.getUserOperationReceipt(userOpHashParam(params)));
  },
  async eth_supportedEntryPoints(params, bundler) {
    expectParams(params, 0, 0);
    return bundler.entryPoints.all.map((ep) => ep.address);
  },
  async eth_chainId(params, bundler) {
    expectParams(params, 0, 0);
    return toQuantity(bundler.chainId);
  },
  async web3_clientVersion(params) {
    expectParams(params, 0, 0);
    return clientVersion;
  },
  async bundler_feeHistory(params, bundler) {
    expectParams(params, 2, 3);
    const entryPoint = parseAddress(params[0], "params[0] (entryPoint)");
    const blockCount = parseInteger(params[1], "params[1] (blockCount)");
    const limit = BigInt(bundler.settings.tracking.receiptLookupBlocks);
    if (blockCount < 1n || blockCount > limit) {
      throw new InvalidParamsError("params[1] (blockCount)", `must be from 1 to ${limit}, got ${blockCount}`);
    }
    const newestBlock = params[2] == null ? "latest" : parseBlock(params[2], "params[2] (newestBlock)");
    return encodeFeeHistory(await bundler.getFeeHistory({ entryPoint, blockCount, newestBlock }));
  },
  bundler_config: bundlerConfigMethod(),
  async bundler_getGasPrice(params, bundler) {
    expectParams(params, 0, 0);
    return encodeGasPrice(await bundler.getGasPrice());
  },
};
