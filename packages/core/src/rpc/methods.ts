import type { Bundler } from "../engine/create-bundler.ts";
import { InvalidParamsError } from "../errors/errors.ts";
import { type DecodeMode, decodeUserOperation } from "../userop/codec.ts";
import { parseAddress, parseHash, toQuantity } from "../userop/wire.ts";
import { encodeGasEstimate, encodeGasPrice, encodeUserOperationLookup, encodeUserOperationReceipt } from "./encode.ts";

/** One JSON-RPC method: positional params in, JSON result out. Errors are thrown `BundlerError`s. */
export type RpcMethod = (params: readonly unknown[], bundler: Bundler) => Promise<unknown>;

/** The version string `web3_clientVersion` answers. */
export const clientVersion = "bundlekit/0.1.0";

function expectParams(params: readonly unknown[], min: number, max: number) {
  if (params.length < min || params.length > max) {
    const expected = min === max ? `${min}` : `${min} to ${max}`;
    throw new InvalidParamsError("params", `expected ${expected} parameters, got ${params.length}`);
  }
}

function userOperationAndEntryPoint(params: readonly unknown[], bundler: Bundler, mode: DecodeMode) {
  expectParams(params, 2, 3);
  const entryPoint = bundler.entryPoints.get(parseAddress(params[1], "params[1]"));
  const op = decodeUserOperation(params[0], { version: entryPoint.version, mode });
  return { op, entryPoint: entryPoint.address };
}

/** The standard ERC-4337 methods (ERC-7769) and the service's own. */
export const rpcMethods: Record<string, RpcMethod> = {
  async eth_sendUserOperation(params, bundler) {
    const { op, entryPoint } = userOperationAndEntryPoint(params, bundler, "send");
    return bundler.sendUserOperation(op, entryPoint);
  },
  async eth_estimateUserOperationGas(params, bundler) {
    const { op, entryPoint } = userOperationAndEntryPoint(params, bundler, "estimate");
    return encodeGasEstimate(await bundler.estimateUserOperationGas(op, entryPoint));
  },
  async eth_getUserOperationByHash(params, bundler) {
    expectParams(params, 1, 1);
    return encodeUserOperationLookup(await bundler.getUserOperationByHash(parseHash(params[0], "params[0]")));
  },
  async eth_getUserOperationReceipt(params, bundler) {
    expectParams(params, 1, 1);
    return encodeUserOperationReceipt(await bundler.getUserOperationReceipt(parseHash(params[0], "params[0]")));
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
  async bundler_getGasPrice(params, bundler) {
    expectParams(params, 0, 0);
    return encodeGasPrice(await bundler.getGasPrice());
  },
};
