import { type Address, getContractAddress, type Hex, isAddressEqual } from "viem";
import { debugTraceCall, type PrestateDiffTrace } from "../chain/debug-trace-call.ts";
import type { EntryPoint } from "../entrypoint/registry.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import { factoryOf, isUserOperationV06, type UserOperation } from "../userop/types.ts";
import { eip7702FactoryMarker } from "../userop/codec.ts";
import type { StateOverride } from "../ports/eth-call.ts";

/**
 * The EntryPoint's `SenderCreator`, which makes the factory call: every EntryPoint release
 * creates it in its constructor, as the first contract it deploys (CREATE nonce 1).
 */
export function senderCreatorOf(entryPoint: EntryPoint): Address {
  let senderCreator = senderCreators.get(entryPoint.address);
  if (!senderCreator) {
    senderCreator = getContractAddress({ from: entryPoint.address, nonce: 1n });
    senderCreators.set(entryPoint.address, senderCreator);
  }
  return senderCreator;
}

const senderCreators = new Map<Address, Address>();

/** True when `op` carries factory data that deploys its sender (not v0.8's EIP-7702 marker). */
export function deploysSender(op: UserOperation): boolean {
  const factory = factoryOf(op);
  return factory !== undefined && factory.toLowerCase() !== eip7702FactoryMarker;
}

/**
 * The state `deploying`'s factory leaves its sender in (code and storage), as a state override:
 * what an operation queued behind a new account's first one is simulated on while that first one
 * is still in the pool. Read with one `debug_traceCall` (`prestateTracer` in diff mode) of the
 * factory call as the EntryPoint's SenderCreator makes it. Undefined when the operation deploys
 * nothing, or the node cannot trace.
 */
export async function deploymentOverride(client: ChainClient, entryPoint: EntryPoint, deploying: UserOperation): Promise<StateOverride | undefined> {
  const factory = factoryOf(deploying);
  if (!factory || !deploysSender(deploying)) return undefined;
  const factoryData = isUserOperationV06(deploying) ? (`0x${deploying.initCode.slice(42)}` as Hex) : (deploying.factoryData ?? "0x");
  let diff: PrestateDiffTrace;
  try {
    diff = await debugTraceCall<PrestateDiffTrace>(
      client,
      { from: senderCreatorOf(entryPoint), to: factory, data: factoryData, gas: `0x${deploying.verificationGasLimit.toString(16)}` },
      { tracer: "prestateTracer", tracerConfig: { diffMode: true } },
    );
  } catch {
    return undefined;
  }
  const [, account] = Object.entries(diff.post ?? {}).find(([address]) => isAddressEqual(address as Address, deploying.sender)) ?? [];
  if (!account?.code || account.code === "0x") return undefined;
  return { [deploying.sender]: { code: account.code, ...(account.storage ? { stateDiff: account.storage } : {}) } };
}
