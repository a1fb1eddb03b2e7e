import type { GasEstimate } from "../gas/estimate-user-operation-gas.ts";
import type { GasPrice } from "../gas/fee-oracle.ts";
import type { FeeHistory } from "../gas/get-fee-history.ts";
import { type Hex, type Log, rpcTransactionType } from "viem";
import type { Preconfirmation } from "../ports/preconfirmation-store.ts";
import type { UserOperationLookup, UserOperationReceipt, UserOperationTransactionReceipt } from "../receipt/lookup.ts";
import { encodeUserOperation } from "../userop/codec.ts";
import { toQuantity } from "../userop/wire.ts";

/** Result shapes of the wire: every number a hex quantity. */

export function encodeGasEstimate(estimate: GasEstimate) {
  return {
    preVerificationGas: toQuantity(estimate.preVerificationGas),
    verificationGas: toQuantity(estimate.verificationGasLimit),
    verificationGasLimit: toQuantity(estimate.verificationGasLimit),
    callGasLimit: toQuantity(estimate.callGasLimit),
    ...(estimate.paymasterVerificationGasLimit !== undefined
      ? { paymasterVerificationGasLimit: toQuantity(estimate.paymasterVerificationGasLimit) }
      : {}),
    ...(estimate.paymasterPostOpGasLimit !== undefined
      ? { paymasterPostOpGasLimit: toQuantity(estimate.paymasterPostOpGasLimit) }
      : {}),
    maxFeePerGas: toQuantity(estimate.maxFeePerGas),
    maxPriorityFeePerGas: toQuantity(estimate.maxPriorityFeePerGas),
  };
}

export function encodeUserOperationLookup(lookup: UserOperationLookup | undefined) {
  if (!lookup) return null;
  return {
    userOperation: encodeUserOperation(lookup.userOperation),
    entryPoint: lookup.entryPoint,
    transactionHash: lookup.transactionHash ?? null,
    blockHash: lookup.blockHash ?? null,
    blockNumber: lookup.blockNumber === undefined ? null : toQuantity(lookup.blockNumber),
    preconfirmation: lookup.preconfirmation ? encodePreconfirmation(lookup.preconfirmation) : null,
  };
}

/**
 * A preconfirmation on the wire (docs/sequencer.md): quantities as hex, `signature` null when
 * unsigned, `reason` only when broken.
 */
export function encodePreconfirmation(preconfirmation: Preconfirmation) {
  const { userOpHash, entryPoint, chainId, blockNumber, transactionHash, signer, signature, status, reason } = preconfirmation;
  return {
    userOpHash,
    entryPoint,
    chainId: toQuantity(chainId),
    blockNumber: toQuantity(blockNumber),
    transactionHash,
    signer,
    signature,
    status,
    ...(reason === undefined ? {} : { reason }),
  };
}

export function encodeUserOperationReceipt(receipt: UserOperationReceipt | undefined) {
  if (!receipt) return null;
  return {
    userOpHash: receipt.userOpHash,
    entryPoint: receipt.entryPoint,
    sender: receipt.sender,
    nonce: toQuantity(receipt.nonce),
    paymaster: receipt.paymaster,
    actualGasCost: toQuantity(receipt.actualGasCost),
    actualGasUsed: toQuantity(receipt.actualGasUsed),
    success: receipt.success,
    ...(receipt.reason !== undefined ? { reason: receipt.reason } : {}),
    logs: receipt.logs.map(encodeLog),
    receipt: encodeTransactionReceipt(receipt.receipt),
  };
}

/**
 * A transaction receipt back in the node's form: the inverse of viem's `formatTransactionReceipt`
 * on the fields it converts, in place (so the keys keep the node's order), every other field as
 * the node sent it; then `confirmations` and `byzantium`, which `eth_getUserOperationReceipt` adds.
 */
function encodeTransactionReceipt({ confirmations, ...receipt }: UserOperationTransactionReceipt) {
  return {
    ...receipt,
    blockNumber: quantity(receipt.blockNumber),
    cumulativeGasUsed: quantity(receipt.cumulativeGasUsed),
    effectiveGasPrice: quantity(receipt.effectiveGasPrice),
    gasUsed: quantity(receipt.gasUsed),
    logs: receipt.logs.map(encodeLog),
    transactionIndex: quantity(receipt.transactionIndex),
    status: receipt.status === "success" ? "0x1" : "0x0",
    type: rpcTransactionType[receipt.type as keyof typeof rpcTransactionType] ?? receipt.type,
    ...(receipt.blobGasPrice !== undefined ? { blobGasPrice: quantity(receipt.blobGasPrice) } : {}),
    ...(receipt.blobGasUsed !== undefined ? { blobGasUsed: quantity(receipt.blobGasUsed) } : {}),
    confirmations: toQuantity(confirmations),
    byzantium: true,
  };
}

/** A mined log back in the node's form: the inverse of viem's `formatLog`. */
function encodeLog(log: Log<bigint, number, false>) {
  return {
    ...log,
    blockNumber: quantity(log.blockNumber),
    // viem sets the key to undefined when the node sent none: JSON leaves it out again.
    blockTimestamp: quantity(log.blockTimestamp),
    logIndex: quantity(log.logIndex),
    transactionIndex: quantity(log.transactionIndex),
  };
}

/** A number back to a hex quantity; null or undefined (viem's stand-in for a field the node left out) stays so. */
function quantity<T extends null | undefined>(value: bigint | number | T): Hex | T {
  return typeof value === "bigint" || typeof value === "number" ? toQuantity(value) : value;
}

export function encodeGasPrice(price: GasPrice) {
  return {
    maxFeePerGas: toQuantity(price.maxFeePerGas),
    maxPriorityFeePerGas: toQuantity(price.maxPriorityFeePerGas),
  };
}

export function encodeFeeHistory(history: FeeHistory) {
  return {
    actualGasPrice: history.actualGasPrice.map(toQuantity),
    maxFeePerGas: history.maxFeePerGas.map(toQuantity),
    maxPriorityFeePerGas: history.maxPriorityFeePerGas.map(toQuantity),
  };
}
