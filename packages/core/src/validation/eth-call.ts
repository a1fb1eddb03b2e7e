import type { Address, Hex } from "viem";
import { InfrastructureError } from "../errors/errors.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import type { BlockOverride, CallState, EthCallResult, StateOverride } from "../ports/eth-call.ts";

export interface EthCallParameters {
  to: Address;
  data: Hex;
  from?: Address;
  gas?: bigint;
  stateOverride?: StateOverride;
  authorizationList?: readonly unknown[];
  /** The block the call runs on (default `latest`), and a block override on top (with `stateOverride`, if any). */
  block?: CallState["block"];
  blockOverride?: BlockOverride | undefined;
}

/** The call as `eth_call` and `eth_estimateGas` take it: hex quantities. */
type RpcCall = { to: Address; data: Hex; from?: Address; gas?: Hex; authorizationList?: readonly unknown[] };
type RpcCallParameters =
  | [call: RpcCall, block: "latest" | "pending"]
  | [call: RpcCall, block: "latest" | "pending", stateOverride: StateOverride]
  | [call: RpcCall, block: "latest" | "pending", stateOverride: StateOverride, blockOverride: BlockOverride];

/**
 * `eth_estimateGas` with the same split: the gas, or the revert data when the call reverts.
 */
export async function estimateGas(
  client: ChainClient,
  parameters: EthCallParameters,
): Promise<{ reverted: false; gas: bigint } | { reverted: true; data: Hex; message: string }> {
  const result = await rpcCall(client, "eth_estimateGas", parameters);
  return result.reverted ? result : { reverted: false, gas: BigInt(result.data) };
}

/**
 * `eth_call` that tells a revert (with its data, which the EntryPoint uses to report results and
 * `FailedOp`) apart from a transport or node failure (thrown as `InfrastructureError`).
 */
export function ethCall(client: ChainClient, parameters: EthCallParameters): Promise<EthCallResult> {
  return rpcCall(client, "eth_call", parameters);
}

async function rpcCall(
  client: ChainClient,
  method: "eth_call" | "eth_estimateGas",
  parameters: EthCallParameters,
): Promise<EthCallResult> {
  const { to, data, from, gas, stateOverride, authorizationList, blockOverride } = parameters;
  const block = parameters.block ?? "latest";
  const call: RpcCall = { to, data };
  if (from) call.from = from;
  if (gas !== undefined) call.gas = `0x${gas.toString(16)}`;
  if (authorizationList) call.authorizationList = authorizationList;
  const params: RpcCallParameters = blockOverride
    ? [call, block, stateOverride ?? {}, blockOverride]
    : stateOverride
      ? [call, block, stateOverride]
      : [call, block];
  try {
    const result = await client.request<{ Parameters: RpcCallParameters; ReturnType: Hex }>({ method, params });
    return { reverted: false, data: result };
  } catch (error) {
    const revert = findRevert(error);
    if (revert) return { reverted: true, ...revert };
    throw new InfrastructureError(`${method} failed: ${(error as Error).message?.split("\n")[0]}`, { cause: error });
  }
}

/** Walk a viem error chain for the node's revert data: data anywhere in the chain first, else a revert message. */
function findRevert(error: unknown): { data: Hex; message: string } | undefined {
  const chain: Record<string, unknown>[] = [];
  for (let e = error as Record<string, unknown> | undefined; e && chain.length < 16; e = e.cause as Record<string, unknown> | undefined) chain.push(e);
  for (const e of chain) {
    const data = typeof e.data === "object" && e.data !== null ? (e.data as Record<string, unknown>).data : e.data;
    if (typeof data === "string" && data.startsWith("0x")) {
      return { data: data as Hex, message: String(e.details ?? e.message ?? "execution reverted") };
    }
  }
  const reverted = chain.find((e) => typeof e.details === "string" && /revert/i.test(e.details));
  return reverted ? { data: "0x", message: reverted.details as string } : undefined;
}
