import type { GasEstimate } from "../gas/estimate-user-operation-gas.ts";
import type { GasPrice } from "../gas/fee-oracle.ts";
import type { FeeHistory } from "../gas/get-fee-history.ts";
import type { UserOperationLookup, UserOperationReceipt } from "../receipt/lookup.ts";
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
    logs: receipt.logs,
    receipt: receipt.receipt,
  };
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
