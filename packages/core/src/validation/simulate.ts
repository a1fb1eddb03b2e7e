import { type Address, decodeErrorResult, decodeFunctionResult, encodeFunctionData, type Hex, parseAbi, slice, zeroAddress } from "viem";
import { getAddress } from "../utils/get-address.ts";
import type { EntryPoint } from "../entrypoint/registry.ts";
import { type EntryPointRefusal, entryPointRefusal, InfrastructureError } from "../errors/errors.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import { getUserOperationHash } from "../userop/hash.ts";
import { toEntryPointStruct } from "../userop/pack.ts";
import type { UserOperation } from "../userop/types.ts";
import { isUserOperationV06 } from "../userop/types.ts";
import { decodeEntryPointRevert } from "./entry-point-revert.ts";
import type { EthCallResult, StateOverride } from "../ports/eth-call.ts";
import type { StakeInfo, ValidationData, ValidationResult } from "../ports/validation-result.ts";
import { ethCall } from "./eth-call.ts";
import { delegationOverride, mergeStateOverrides } from "./state-override.ts";
import { parseValidationData } from "./validation-data.ts";

/** What `simulateHandleOp` tells: validation plus execution, with the amount paid. */
export interface ExecutionResult {
  preOpGas: bigint;
  paid: bigint;
  targetSuccess: boolean;
  targetResult: Hex;
}

export interface SimulateOptions {
  /** Extra state overrides (e.g. a sender balance for estimation). */
  stateOverride?: StateOverride | undefined;
}

export interface SimulateHandleOpOptions extends SimulateOptions {
  /** A call the EntryPoint makes after the operation; its outcome is `targetSuccess`/`targetResult`. */
  target?: { address: Hex; data: Hex } | undefined;
}

/**
 * Run the EntryPoint's `simulateValidation` on the node: v0.6 through its own method (which
 * always reverts with the result), v0.7+ by placing `EntryPointSimulations` at the EntryPoint's
 * address. A `FailedOp` becomes an `EntryPointRefusal` (`entryPointRefusal`) with its `AAxx` reason.
 */
export async function simulateValidation(
  client: ChainClient,
  entryPoint: EntryPoint,
  op: UserOperation,
  options: SimulateOptions = {},
): Promise<ValidationResult> {
  const result = await ethCall(client, validationCall(entryPoint, op, options.stateOverride));
  return attributeV06(client, entryPoint, op, decodeValidationResult(entryPoint, op, result), options.stateOverride);
}

/** v0.6 reports the account's and the paymaster's signature check and window as one: tell whose is whose. */
export async function attributeV06(
  client: ChainClient,
  entryPoint: EntryPoint,
  op: UserOperation,
  result: ValidationResult,
  stateOverride?: StateOverride,
): Promise<ValidationResult> {
  const signed = await attributeSignatureFailureV06(client, entryPoint, op, result, stateOverride);
  return attributeTimeRangeV06(client, entryPoint, op, signed, stateOverride);
}

/** The `simulateValidation` call of `op`, as `eth_call` or a tracer runs it. */
export function validationCall(entryPoint: EntryPoint, op: UserOperation, stateOverride?: StateOverride): SimulationCall {
  return simulationCall(entryPoint, op, "simulateValidation", [toEntryPointStruct(op)], { stateOverride });
}

/**
 * What `simulateValidation` answered, decoded: v0.6 reverts with its result, v0.7+ returns it. A
 * `FailedOp` throws an `EntryPointRefusal` with its `AAxx` reason.
 */
export function decodeValidationResult(entryPoint: EntryPoint, op: UserOperation, result: EthCallResult): ValidationResult {
  const abi = entryPoint.simulations?.abi ?? entryPoint.abi;
  if (isUserOperationV06(op)) {
    const decoded = decodeSimulationRevert(abi, result, ["ValidationResult", "ValidationResultWithAggregation"]);
    const [returnInfo, senderInfo, factoryInfo, paymasterInfo] = decoded as [V06ReturnInfo, StakeInfo, StakeInfo, StakeInfo];
    const account: ValidationData = {
      aggregator: returnInfo.sigFailed ? "0x0000000000000000000000000000000000000001" : zeroAddress,
      signatureFailed: returnInfo.sigFailed,
      validAfter: BigInt(returnInfo.validAfter),
      validUntil: BigInt(returnInfo.validUntil) === 0n ? (1n << 48n) - 1n : BigInt(returnInfo.validUntil),
    };
    return {
      preOpGas: returnInfo.preOpGas,
      prefund: returnInfo.prefund,
      account,
      paymaster: op.paymasterAndData === "0x" ? undefined : account,
      paymasterContext: returnInfo.paymasterContext,
      sender: senderInfo,
      factory: factoryInfo,
      paymasterStake: paymasterInfo,
    };
  }
  const data = expectReturn(abi, result);
  const decoded = decodeFunctionResult({ abi, functionName: "simulateValidation", data }) as V07ValidationResult;
  return {
    preOpGas: decoded.returnInfo.preOpGas,
    prefund: decoded.returnInfo.prefund,
    account: parseValidationData(decoded.returnInfo.accountValidationData, entryPoint.version),
    paymaster: op.paymaster ? parseValidationData(decoded.returnInfo.paymasterValidationData, entryPoint.version) : undefined,
    paymasterContext: decoded.returnInfo.paymasterContext,
    sender: decoded.senderInfo,
    factory: decoded.factoryInfo,
    paymasterStake: decoded.paymasterInfo,
  };
}

/**
 * v0.6's `simulateValidation` reports one `sigFailed` for the account and the paymaster together.
 * When an operation with a paymaster has it, `handleOps` of the operation alone tells whose
 * signature failed: it reverts with `AA24` (the account's) or `AA34` (the paymaster's).
 */
export async function attributeSignatureFailureV06(
  client: ChainClient,
  entryPoint: EntryPoint,
  op: UserOperation,
  result: ValidationResult,
  stateOverride?: StateOverride,
): Promise<ValidationResult> {
  if (!isUserOperationV06(op) || !result.paymaster || !result.account.signatureFailed) return result;
  const data = encodeFunctionData({ abi: entryPoint.abi, functionName: "handleOps", args: [[toEntryPointStruct(op)], zeroAddress] });
  const outcome = await ethCall(client, { to: entryPoint.address, data, stateOverride: mergeStateOverrides(stateOverride, delegationOverride(op)) });
  const failure = outcome.reverted ? decodeEntryPointRevert(entryPoint.abi, outcome.data) : undefined;
  if (!failure?.reason.startsWith("AA34")) return { ...result, paymaster: { ...result.paymaster, signatureFailed: false, aggregator: zeroAddress } };
  return { ...result, account: { ...result.account, signatureFailed: false, aggregator: zeroAddress }, paymaster: { ...result.paymaster, signatureFailed: true } };
}

const validatePaymasterUserOpV06 = parseAbi([
  "struct UserOperation { address sender; uint256 nonce; bytes initCode; bytes callData; uint256 callGasLimit; uint256 verificationGasLimit; uint256 preVerificationGas; uint256 maxFeePerGas; uint256 maxPriorityFeePerGas; bytes paymasterAndData; bytes signature; }",
  "function validatePaymasterUserOp(UserOperation userOp, bytes32 userOpHash, uint256 maxCost) returns (bytes context, uint256 validationData)",
]);
const maxUint48 = (1n << 48n) - 1n;

/**
 * v0.6's `simulateValidation` reports one validity window: the account's and the paymaster's
 * intersected. When an operation with a paymaster has a bounded one, the paymaster's own
 * `validatePaymasterUserOp`, called as the EntryPoint calls it, tells the paymaster's window; the
 * account keeps only the bounds the paymaster's does not explain. So a window that refuses the
 * operation names the entity that set it, as on v0.7+. If the paymaster's call reverts, the
 * intersection stays the account's.
 */
export async function attributeTimeRangeV06(
  client: ChainClient,
  entryPoint: EntryPoint,
  op: UserOperation,
  result: ValidationResult,
  stateOverride?: StateOverride,
): Promise<ValidationResult> {
  if (!isUserOperationV06(op) || !result.paymaster) return result;
  const window = result.account;
  if (window.validAfter === 0n && window.validUntil === maxUint48) return result;
  const chainId = client.chain?.id ?? (await client.getChainId());
  const args = [toEntryPointStruct(op), getUserOperationHash(op, entryPoint, chainId), result.prefund] as const;
  const data = encodeFunctionData({ abi: validatePaymasterUserOpV06, functionName: "validatePaymasterUserOp", args });
  const outcome = await ethCall(client, { from: entryPoint.address, to: getAddress(slice(op.paymasterAndData, 0, 20)), data, gas: op.verificationGasLimit, stateOverride: mergeStateOverrides(stateOverride, delegationOverride(op)) });
  if (outcome.reverted) return result;
  const [, validationData] = decodeFunctionResult({ abi: validatePaymasterUserOpV06, functionName: "validatePaymasterUserOp", data: outcome.data });
  const own = parseValidationData(validationData);
  const account = {
    ...window,
    validAfter: window.validAfter > own.validAfter ? window.validAfter : 0n,
    validUntil: window.validUntil < own.validUntil ? window.validUntil : maxUint48,
  };
  return { ...result, account, paymaster: { ...result.paymaster, validAfter: own.validAfter, validUntil: own.validUntil } };
}

/** Run `simulateHandleOp`: validation and execution of one operation, reporting what it paid. */
export async function simulateHandleOp(
  client: ChainClient,
  entryPoint: EntryPoint,
  op: UserOperation,
  options: SimulateHandleOpOptions = {},
): Promise<ExecutionResult> {
  const abi = entryPoint.simulations?.abi ?? entryPoint.abi;
  const args = [toEntryPointStruct(op), options.target?.address ?? zeroAddress, options.target?.data ?? "0x"];
  const result = await ethCall(client, simulationCall(entryPoint, op, "simulateHandleOp", args, options));
  const decoded = isUserOperationV06(op)
    ? (() => {
        const [preOpGas, paid, , , targetSuccess, targetResult] = decodeSimulationRevert(abi, result, ["ExecutionResult"]);
        return { preOpGas, paid, targetSuccess, targetResult } as ExecutionResult;
      })()
    : (decodeFunctionResult({ abi, functionName: "simulateHandleOp", data: expectReturn(abi, result) }) as ExecutionResult);
  return {
    preOpGas: decoded.preOpGas,
    paid: decoded.paid,
    targetSuccess: decoded.targetSuccess,
    targetResult: decoded.targetResult,
  };
}

type V06ReturnInfo = {
  preOpGas: bigint;
  prefund: bigint;
  sigFailed: boolean;
  validAfter: number | bigint;
  validUntil: number | bigint;
  paymasterContext: Hex;
};

type V07ValidationResult = {
  returnInfo: { preOpGas: bigint; prefund: bigint; accountValidationData: bigint; paymasterValidationData: bigint; paymasterContext: Hex };
  senderInfo: StakeInfo;
  factoryInfo: StakeInfo;
  paymasterInfo: StakeInfo;
};

/** An EntryPoint simulation as a call: its target, calldata and the state override it needs. */
export interface SimulationCall {
  to: Address;
  data: Hex;
  stateOverride: StateOverride;
}

function simulationCall(
  entryPoint: EntryPoint,
  op: UserOperation,
  functionName: "simulateValidation" | "simulateHandleOp",
  args: readonly unknown[],
  options: SimulateOptions,
): SimulationCall {
  const abi = entryPoint.simulations?.abi ?? entryPoint.abi;
  const stateOverride: StateOverride = { ...options.stateOverride };
  if (entryPoint.simulations) {
    stateOverride[entryPoint.address] = { ...stateOverride[entryPoint.address], code: entryPoint.simulations.deployedBytecode };
  }
  if (op.authorization) {
    // Simulate the EIP-7702 delegation the bundle transaction will carry.
    stateOverride[op.sender] = { ...stateOverride[op.sender], ...delegationOverride(op)[op.sender] };
  }
  return { to: entryPoint.address, data: encodeFunctionData({ abi, functionName, args }), stateOverride };
}

/** v0.6 simulations revert on success: decode one of the expected result errors, or the failure. */
function decodeSimulationRevert(abi: EntryPointAbi, result: EthCallResult, expected: string[]): readonly unknown[] {
  if (!result.reverted) throw new InfrastructureError("EntryPoint simulation returned instead of reverting with its result");
  try {
    const decoded = decodeErrorResult({ abi, data: result.data });
    if (expected.includes(decoded.errorName)) return decoded.args as readonly unknown[];
  } catch {
    // fall through to failure decoding
  }
  throw rejection(abi, result);
}

function expectReturn(abi: EntryPointAbi, result: EthCallResult): Hex {
  if (result.reverted) throw rejection(abi, result);
  return result.data;
}

function rejection(abi: EntryPointAbi, result: EthCallResult & { reverted: true }): Error {
  return simulationRejection(abi, result.data, result.message);
}

/** The error for a simulation that failed with `data`: the `AAxx` reason of a `FailedOp`, or the raw revert. */
export function simulationRejection(abi: EntryPointAbi, data: Hex, message = "reverted"): EntryPointRefusal {
  const failure = decodeEntryPointRevert(abi, data);
  if (failure) return entryPointRefusal(failure.reason, failure.inner ? { revertData: failure.inner } : {});
  return entryPointRefusal(`validation reverted: ${message}`, { revertData: data });
}

type EntryPointAbi = EntryPoint["abi"];

