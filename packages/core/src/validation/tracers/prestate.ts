import type { Address, Hex } from "viem";
import { debugTraceCall, type PrestateAccount, type PrestateTrace, type RpcTraceCall } from "../../chain/debug-trace-call.ts";
import { InfrastructureError } from "../../errors/errors.ts";
import type { ChainClient } from "../../ports/chain-client.ts";
import type { StateOverride } from "../../ports/eth-call.ts";
import type { TraceCallRequest } from "../../ports/validation-tracer.ts";
import { cachedCode } from "./in-process/code-cache.ts";

/** Every account and slot a call reads, before it runs (`prestateTracer`), lower-case addresses. */
export type Prestate = Record<Address, PrestateAccount>;

/** The block a call runs in, for what the prestate does not carry. */
export interface BlockEnvironment {
  number: bigint;
  timestamp: bigint;
  coinbase: Address;
  gasLimit: bigint;
  baseFeePerGas: bigint;
  prevRandao: Hex;
}

/** The call as the node's `debug_traceCall` takes it. */
export function rpcCall(call: TraceCallRequest["call"]): RpcTraceCall {
  return { from: call.from, to: call.to, data: call.data, gas: `0x${call.gas.toString(16)}` };
}

/**
 * The state `call` reads, from one `debug_traceCall` with the node's `prestateTracer`, under the
 * same state override (`stateOverrides`, the spelling nodes honour) the call runs with.
 */
export async function fetchPrestate(
  client: ChainClient,
  call: TraceCallRequest["call"],
  stateOverride: StateOverride | undefined,
  tracerConfig?: { disableStorage: boolean },
): Promise<Prestate> {
  try {
    const config = { tracer: "prestateTracer", ...(tracerConfig ? { tracerConfig } : {}), ...(stateOverride ? { stateOverrides: stateOverride } : {}) };
    const result = await debugTraceCall<PrestateTrace>(client, rpcCall(call), config);
    const prestate: Prestate = {};
    for (const [address, account] of Object.entries(result)) prestate[address.toLowerCase() as Address] = account;
    return prestate;
  } catch (error) {
    throw new InfrastructureError(`debug_traceCall with prestateTracer failed: ${(error as Error).message?.split("\n")[0]}`, { cause: error });
  }
}

/** The latest block's environment, as `eth_call` on "latest" sees it. */
export async function fetchBlockEnvironment(client: ChainClient): Promise<BlockEnvironment> {
  const block = await client.getBlock({ blockTag: "latest" });
  return {
    number: block.number ?? 0n,
    timestamp: block.timestamp,
    coinbase: block.miner.toLowerCase() as Address,
    gasLimit: block.gasLimit,
    baseFeePerGas: block.baseFeePerGas ?? 0n,
    prevRandao: block.mixHash ?? `0x${"00".repeat(32)}`,
  };
}

/**
 * Code hashes of the contracts a validation touched, from its prestate, for COD-010; not of the
 * EntryPoint or of accounts whose code the simulation's own state override put there.
 */
export function codeHashesOf(prestate: Prestate, request: TraceCallRequest): Record<Address, Hex> {
  const overridden = new Set(Object.entries(request.stateOverride ?? {}).flatMap(([a, o]) => (o.code ? [a.toLowerCase()] : [])));
  const hashes: Record<Address, Hex> = {};
  for (const [address, account] of Object.entries(prestate) as [Address, PrestateAccount][]) {
    if (!account.code || account.code === "0x" || overridden.has(address) || address === request.entryPoint.toLowerCase()) continue;
    hashes[address] = cachedCode(account.code).hash;
  }
  return hashes;
}
