import {
  type Abi,
  type AbiFunction,
  type Address,
  decodeErrorResult,
  decodeFunctionResult,
  encodeFunctionData,
  type Hex,
  parseAbi,
  toFunctionSelector,
} from "viem";
import type { EntryPoint } from "../entrypoint/registry.ts";
import { ExecutionRevertedError, InfrastructureError } from "../errors/errors.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import { toEntryPointStruct } from "../userop/pack.ts";
import { isUserOperationV06, paymasterOf, type UserOperation } from "../userop/types.ts";
import { ethCall } from "../validation/eth-call.ts";
import { simulationRejection } from "../validation/simulate.ts";
import { delegationOverride, mergeStateOverrides } from "../validation/state-override.ts";
import type { StateOverride } from "../ports/eth-call.ts";
import gasLimitSearch from "./artifacts/GasLimitSearch.json" with { type: "json" };
import postOpProbe from "./artifacts/PostOpProbe.json" with { type: "json" };
import { revertReason } from "../utils/revert-reason.ts";

/** The smallest gas limits at which each phase of an operation succeeds. */
export interface FoundGasLimits {
  verificationGasLimit: bigint;
  callGasLimit: bigint;
  /** v0.7+ with a paymaster. */
  paymasterVerificationGasLimit?: bigint | undefined;
  /** With a paymaster whose postOp runs (v0.6: it runs within verificationGasLimit). */
  paymasterPostOpGas?: bigint | undefined;
  /** Gas used before execution (`preOpGas` less the operation's preVerificationGas, which the EntryPoint adds to it). */
  verificationGasUsed: bigint;
  /** With `depositOf`: that account's EntryPoint deposit before the operation. */
  deposit?: bigint | undefined;
}

export interface SearchGasLimitsParameters {
  client: ChainClient;
  entryPoint: EntryPoint;
  /** The operation with its limits set to the most each phase may have (or, with `exact`, to the limits to check). */
  userOperation: UserOperation;
  stateOverride?: StateOverride | undefined;
  /** Only check that every phase succeeds at the operation's own limits. */
  exact?: boolean | undefined;
  /** Also read this account's EntryPoint deposit, in the same call. */
  depositOf?: Address | undefined;
}

const searchAbi = gasLimitSearch.abi as Abi;
/** The EntryPoint's deposit of an account (every version's `StakeManager`). */
const depositAbi = parseAbi(["function balanceOf(address account) view returns (uint256)"]);
/** `GasLimitSearch.IMPLEMENTATION`: where the EntryPoint's own code goes. */
const entryPointImplementation: Address = "0x4337000000000000000000000000000000005E4c";
/** `PostOpProbe.IMPLEMENTATION`: where the paymaster's own code goes. */
const paymasterImplementation: Address = "0x4337000000000000000000000000000000009057";
type Found = { ok: boolean; gas: bigint; failure: Hex };

/**
 * Find the gas limits an operation needs by search on the node, or check its own limits
 * (`exact`). `GasLimitSearch` stands in for the EntryPoint (whose code it delegates to) and, in
 * one `eth_call`, bisects verificationGasLimit and paymasterVerificationGasLimit over the
 * EntryPoint's `simulateValidation`, and callGasLimit over the account's call after
 * `simulateHandleOp` validated the operation (where the EntryPoint would execute it). A paymaster's postOp is searched in a second call
 * made at the same time, with `PostOpProbe` standing in for the paymaster.
 *
 * Throws an `EntryPointRefusal` when validation fails with the most gas, and
 * `ExecutionRevertedError` with the reason when the call (or postOp) reverts with it.
 */
export async function searchGasLimits(parameters: SearchGasLimitsParameters): Promise<FoundGasLimits> {
  const { client, entryPoint, userOperation: op } = parameters;
  const exact = parameters.exact ?? false;
  const paymaster = paymasterOf(op);
  const [entryPointCode, paymasterCode] = await Promise.all([
    entryPoint.simulations ? entryPoint.simulations.deployedBytecode : client.getCode({ address: entryPoint.address }),
    paymaster ? client.getCode({ address: paymaster }) : undefined,
  ]);
  if (!entryPointCode) throw new InfrastructureError(`EntryPoint ${entryPoint.address} has no code`);
  const stateOverride = mergeStateOverrides(parameters.stateOverride, {
    [entryPoint.address]: { code: gasLimitSearch.deployedBytecode as Hex },
    [entryPointImplementation]: { code: entryPointCode },
    ...delegationOverride(op),
  })!;
  const gas = 3n * maxGasOf(op) + 5_000_000n;

  const searches = [searchSimulation(entryPoint, op, "verificationGasLimit", exact)];
  if (!isUserOperationV06(op) && op.paymaster) searches.push(searchSimulation(entryPoint, op, "paymasterVerificationGasLimit", exact));
  // The deposit is read last: its storage slot would be warm for the probes otherwise. They all
  // revert their frames, so it is the deposit before the operation.
  const depositCall = parameters.depositOf ? [encodeFunctionData({ abi: depositAbi, functionName: "balanceOf", args: [parameters.depositOf] })] : [];
  const calls = [...searches, simulateCall(entryPoint, op, "callResult_gls", { callSearch: callSearchOf(entryPoint, op.callGasLimit, exact) }), ...depositCall];

  const postOpRun = async () => {
    if (!paymaster) return undefined;
    const postOpLimit = isUserOperationV06(op) ? op.verificationGasLimit : (op.paymasterPostOpGasLimit ?? 0n);
    // PostOpProbe's own work adds to the paymaster's validation and postOp: in a check, give them
    // room (the other call checks validation; postOp is checked at its limit all the same).
    const roomy = (limit: bigint | undefined) => (exact ? (limit ?? 0n) * 2n + 100_000n : limit);
    const postOpOp = (
      isUserOperationV06(op)
        ? { ...op, verificationGasLimit: roomy(op.verificationGasLimit) }
        : { ...op, paymasterVerificationGasLimit: roomy(op.paymasterVerificationGasLimit), paymasterPostOpGasLimit: roomy(op.paymasterPostOpGasLimit) }
    ) as UserOperation;
    const result = await runBatch(client, entryPoint, 3n * maxGasOf(postOpOp) + 5_000_000n, [
      simulateCall(entryPoint, postOpOp, "postOpResult_gls", { postOpGas: exact ? postOpLimit : 0n }),
    ], mergeStateOverrides(stateOverride, {
      [paymaster]: { code: postOpProbe.deployedBytecode as Hex },
      [paymasterImplementation]: { code: paymasterCode ?? "0x" },
    })!);
    const execution = decodeExecution(entryPoint, result[0]!);
    const [called, ok, postOpGas] = decodeTargetResult(execution.targetSuccess, execution.targetResult, "postOpResult_gls") as readonly [boolean, boolean, bigint];
    if (!called) return undefined;
    if (!ok) throw new ExecutionRevertedError("0x", "the paymaster's postOp reverts even with all the gas there is");
    return postOpGas;
  };

  // Both calls run at once, but their failures count in the EntryPoint's order: validation (with
  // the real paymaster, so a paymaster without code is AA30), the call, then postOp. The postOp
  // run stands a probe in for the paymaster, so its validation can fail where the real one fails
  // first (AA31 for a paymaster with no code and no deposit).
  const [batch, postOp] = await Promise.allSettled([runBatch(client, entryPoint, gas, calls, stateOverride), postOpRun()]);
  if (batch.status === "rejected") throw batch.reason;
  const results = batch.value;
  const deposit = depositCall.length > 0 ? (decodeFunctionResult({ abi: depositAbi, functionName: "balanceOf", data: results.at(-1)! }) as bigint) : undefined;
  const limits = results.slice(0, searches.length).map((data) => {
    const found = decodeFunctionResult({ abi: searchAbi, functionName: "searchSimulation_gls", data }) as Found;
    if (!found.ok) throw simulationRejection(simulationAbi(entryPoint), found.failure);
    return found.gas;
  });
  const execution = decodeExecution(entryPoint, results[searches.length]!);
  const call = decodeTargetResult(execution.targetSuccess, execution.targetResult, "callResult_gls") as Found;
  if (!call.ok) throw new ExecutionRevertedError(call.failure, revertReason(call.failure));
  if (postOp.status === "rejected") throw postOp.reason;
  const paymasterPostOpGas = postOp.value;
  return {
    verificationGasLimit: limits[0]!,
    callGasLimit: call.gas,
    paymasterVerificationGasLimit: limits[1],
    paymasterPostOpGas,
    verificationGasUsed: execution.preOpGas - op.preVerificationGas,
    deposit,
  };
}

/** The most gas any phase of `op` may use: what the eth_call must hold a few times over. */
function maxGasOf(op: UserOperation): bigint {
  const limits = [op.verificationGasLimit, op.callGasLimit];
  if (!isUserOperationV06(op)) limits.push(op.paymasterVerificationGasLimit ?? 0n, op.paymasterPostOpGasLimit ?? 0n);
  return limits.reduce((a, b) => a + b, 0n);
}

function simulationAbi(entryPoint: EntryPoint): Abi {
  return entryPoint.simulations?.abi ?? entryPoint.abi;
}

/** Values that mark where a limit sits in the encoded simulation, replaced before any probe. */
const markers = { verificationGasLimit: 0x5ea7c4a11b0a7ca11b0a7ca11b0a7c1n, paymasterVerificationGasLimit: 0x9a55ba119a55ba119a55ba119a55ba1n };

/** A `searchSimulation_gls` call: `simulateValidation` of `op` with the limit `field` to find. */
function searchSimulation(entryPoint: EntryPoint, op: UserOperation, field: keyof typeof markers, exact: boolean): Hex {
  const limits: Partial<Record<keyof typeof markers, bigint>> = op;
  const hi = limits[field]!;
  const marker = markers[field];
  const data = encodeFunctionData({
    abi: simulationAbi(entryPoint),
    functionName: "simulateValidation",
    args: [toEntryPointStruct({ ...op, [field]: marker } as UserOperation)],
  });
  // v0.6 packs nothing: a limit is a 32-byte word; v0.7+ pack each into 16 bytes.
  const width = isUserOperationV06(op) ? 32 : 16;
  const at = data.indexOf(marker.toString(16).padStart(width * 2, "0"), 2);
  if (at < 0 || at % 2 !== 0) throw new InfrastructureError(`cannot place ${field} in the simulation's calldata`);
  const okSelectors = isUserOperationV06(op)
    ? [
        toFunctionSelector("ValidationResult((uint256,uint256,bool,uint48,uint48,bytes),(uint256,uint256),(uint256,uint256),(uint256,uint256))"),
        toFunctionSelector(
          "ValidationResultWithAggregation((uint256,uint256,bool,uint48,uint48,bytes),(uint256,uint256),(uint256,uint256),(uint256,uint256),(address,(uint256,uint256)))",
        ),
      ]
    : ["0x00000000", "0x00000000"];
  return encodeFunctionData({
    abi: searchAbi,
    functionName: "searchSimulation_gls",
    args: [{ data, offset: BigInt((at - 2) / 2), width: BigInt(width), hi, okSelector: okSelectors[0], okSelector2: okSelectors[1] }, exact],
  });
}

/**
 * A `simulate_gls` call: `simulateHandleOp(op)` (searching the call or postOp gas on the way, see
 * GasLimitSearch), then the EntryPoint calls itself (GasLimitSearch) for the outcome with `target`.
 */
function simulateCall(
  entryPoint: EntryPoint,
  op: UserOperation,
  target: "callResult_gls" | "postOpResult_gls",
  { postOpGas = 0n, callSearch = 0n }: { postOpGas?: bigint; callSearch?: bigint },
): Hex {
  const data = encodeFunctionData({
    abi: simulationAbi(entryPoint),
    functionName: "simulateHandleOp",
    args: [toEntryPointStruct(op), entryPoint.address, encodeFunctionData({ abi: searchAbi, functionName: target })],
  });
  return encodeFunctionData({ abi: searchAbi, functionName: "simulate_gls", args: [data, postOpGas, callSearch] });
}

/** What `simulate_gls` is to search of the call: innerHandleOp's selector ‖ exact ‖ the most gas. */
function callSearchOf(entryPoint: EntryPoint, hi: bigint, exact: boolean): bigint {
  const innerHandleOp = entryPoint.abi.find((item): item is AbiFunction => item.type === "function" && item.name === "innerHandleOp");
  if (!innerHandleOp) throw new InfrastructureError(`EntryPoint v${entryPoint.version} has no innerHandleOp`);
  return (BigInt(toFunctionSelector(innerHandleOp)) << 224n) | ((exact ? 1n : 0n) << 128n) | hi;
}

async function runBatch(client: ChainClient, entryPoint: EntryPoint, gas: bigint, calls: Hex[], stateOverride: StateOverride): Promise<readonly Hex[]> {
  const result = await ethCall(client, {
    to: entryPoint.address,
    data: encodeFunctionData({ abi: searchAbi, functionName: "batch_gls", args: [calls] }),
    gas,
    stateOverride,
  });
  if (result.reverted) throw new InfrastructureError(`gas limit search failed: ${result.message}`);
  return decodeFunctionResult({ abi: searchAbi, functionName: "batch_gls", data: result.data }) as readonly Hex[];
}

/** What `simulate_gls` reports of `simulateHandleOp`: v0.6 reverts with its result, v0.7+ return it. */
function decodeExecution(entryPoint: EntryPoint, data: Hex) {
  const [success, result] = decodeFunctionResult({ abi: searchAbi, functionName: "simulate_gls", data }) as readonly [boolean, Hex];
  const abi = simulationAbi(entryPoint);
  if (entryPoint.version === "0.6") {
    try {
      const decoded = decodeErrorResult({ abi, data: result });
      if (decoded.errorName === "ExecutionResult") {
        const [preOpGas, , , , targetSuccess, targetResult] = decoded.args as readonly [bigint, bigint, number, number, boolean, Hex];
        return { preOpGas, targetSuccess, targetResult };
      }
    } catch {
      // a failure, decoded below
    }
    throw simulationRejection(abi, result);
  }
  if (!success) throw simulationRejection(abi, result);
  const decoded = decodeFunctionResult({ abi, functionName: "simulateHandleOp", data: result }) as {
    preOpGas: bigint;
    targetSuccess: boolean;
    targetResult: Hex;
  };
  return decoded;
}

function decodeTargetResult(success: boolean, data: Hex, functionName: "callResult_gls" | "postOpResult_gls"): unknown {
  if (!success) throw new InfrastructureError(`gas limit search: ${functionName} failed (${data.slice(0, 74)})`);
  return decodeFunctionResult({ abi: searchAbi, functionName, data });
}
