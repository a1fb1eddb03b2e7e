import type { Address, Hex } from "viem";
import { getAddress } from "../utils/get-address.ts";
import { type PackedUserOperation as ViemPackedUserOperation, toPackedUserOperation } from "viem/account-abstraction";
import type { EntryPointVersion } from "../entrypoint/version.ts";
import { paymasterSignatureLength } from "./paymaster-signature.ts";
import type { UserOperation, UserOperationV06, UserOperationV07 } from "./types.ts";
import { isUserOperationV06 } from "./types.ts";
import { eip7702FactoryMarker } from "./codec.ts";

/** The EIP-7702 marker as the EntryPoint reads it from `initCode`: `0x7702` padded to 20 bytes. */
const paddedEip7702Marker: Address = "0x7702000000000000000000000000000000000000";

/**
 * The user operation as the EntryPoint's ABI takes it: the v0.6 struct as is, or the v0.7+
 * `PackedUserOperation` (gas limits and fees packed into 32-byte words). The short EIP-7702
 * marker `factory: "0x7702"` (v0.8+) goes into `initCode` padded to 20 bytes, before any
 * `factoryData`: the EntryPoint compares the first 20 bytes, and would take `0x7702‖factoryData`
 * for an ordinary factory.
 */
export function toEntryPointStruct(op: UserOperationV06): UserOperationV06;
export function toEntryPointStruct(op: UserOperationV07): ViemPackedUserOperation;
export function toEntryPointStruct(op: UserOperation): UserOperationV06 | ViemPackedUserOperation;
export function toEntryPointStruct(op: UserOperation): UserOperationV06 | ViemPackedUserOperation {
  if (isUserOperationV06(op)) return op;
  if (packsPlainly(op)) {
    return {
      accountGasLimits: `0x${half(op.verificationGasLimit)}${half(op.callGasLimit)}`,
      callData: op.callData,
      initCode: packedInitCode(op),
      gasFees: `0x${half(op.maxPriorityFeePerGas)}${half(op.maxFeePerGas)}`,
      nonce: op.nonce ?? 0n,
      paymasterAndData: packedPaymasterAndData(op),
      preVerificationGas: op.preVerificationGas ?? 0n,
      sender: op.sender,
      signature: op.signature ?? "0x",
    };
  }
  return toPackedUserOperation(op.factory === eip7702FactoryMarker ? { ...op, factory: paddedEip7702Marker } : op);
}

const uint128Limit = 1n << 128n;
const inHalf = (value: bigint | undefined) => value === undefined || (value >= 0n && value < uint128Limit);
/** A value within uint128 as a 16-byte half word of hex without `0x` (none counts as 0). */
const half = (value: bigint | undefined) => (value || 0n).toString(16).padStart(32, "0");
const isPrefixed = (hex: string | undefined) => hex === undefined || hex.startsWith("0x");

/**
 * Whether `toEntryPointStruct` packs `op` itself, without viem's generic hex helpers: its limits
 * and fees fit their 16 bytes, its hex is `0x`-prefixed and it carries no separate v0.9 paymaster
 * signature. Every operation is packed, or measured as packed, at admission and again for each
 * bundle it is proposed in. Anything else goes to viem's `toPackedUserOperation`, which packs it
 * or refuses it.
 */
export function packsPlainly(op: UserOperationV07): boolean {
  return (
    inHalf(op.verificationGasLimit) &&
    inHalf(op.callGasLimit) &&
    inHalf(op.maxPriorityFeePerGas) &&
    inHalf(op.maxFeePerGas) &&
    (!op.paymaster || (inHalf(op.paymasterVerificationGasLimit) && inHalf(op.paymasterPostOpGasLimit))) &&
    !op.paymasterSignature &&
    isPrefixed(op.factory) &&
    isPrefixed(op.factoryData) &&
    isPrefixed(op.paymaster) &&
    isPrefixed(op.paymasterData) &&
    isPrefixed(op.signature)
  );
}

/** The `initCode` of an operation `packsPlainly` packs: factory (the EIP-7702 marker padded to 20 bytes) and its data. */
export function packedInitCode(op: UserOperationV07): Hex {
  if (!op.factory) return "0x";
  return `${op.factory === eip7702FactoryMarker ? paddedEip7702Marker : op.factory}${(op.factoryData ?? "0x").slice(2)}`;
}

/** The `paymasterAndData` of an operation `packsPlainly` packs: paymaster, its two gas limits and its data. */
export function packedPaymasterAndData(op: UserOperationV07): Hex {
  if (!op.paymaster) return "0x";
  return `${op.paymaster}${half(op.paymasterVerificationGasLimit)}${half(op.paymasterPostOpGasLimit)}${(op.paymasterData ?? "0x").slice(2)}`;
}

/** A `PackedUserOperation` (v0.7+) as read from `handleOps` calldata. */
export interface PackedUserOperation {
  sender: Address;
  nonce: bigint;
  initCode: Hex;
  callData: Hex;
  accountGasLimits: Hex;
  preVerificationGas: bigint;
  gasFees: Hex;
  paymasterAndData: Hex;
  signature: Hex;
}

/**
 * Unpack a v0.7+ `PackedUserOperation` into the ERC-7769 form. For v0.9 (`version`), a paymaster
 * signature at the end of `paymasterAndData` comes back as `paymasterSignature`.
 */
export function fromPackedUserOperation(packed: PackedUserOperation, version?: EntryPointVersion): UserOperationV07 {
  const word = (hex: Hex, half: 0 | 1) => BigInt(`0x${hex.slice(2 + half * 32, 34 + half * 32) || "0"}`);
  const op: UserOperationV07 = {
    sender: getAddress(packed.sender),
    nonce: packed.nonce,
    callData: packed.callData,
    verificationGasLimit: word(packed.accountGasLimits, 0),
    callGasLimit: word(packed.accountGasLimits, 1),
    preVerificationGas: packed.preVerificationGas,
    maxPriorityFeePerGas: word(packed.gasFees, 0),
    maxFeePerGas: word(packed.gasFees, 1),
    signature: packed.signature,
  };
  if (packed.initCode.length >= 42) {
    op.factory = getAddress(packed.initCode.slice(0, 42));
    op.factoryData = `0x${packed.initCode.slice(42)}`;
  }
  if (packed.paymasterAndData.length >= 106) {
    const p = packed.paymasterAndData;
    op.paymaster = getAddress(p.slice(0, 42));
    op.paymasterVerificationGasLimit = BigInt(`0x${p.slice(42, 74)}`);
    op.paymasterPostOpGasLimit = BigInt(`0x${p.slice(74, 106)}`);
    op.paymasterData = `0x${p.slice(106)}`;
    const signatureLength = version === "0.9" ? paymasterSignatureLength(Buffer.from(p.slice(2), "hex")) : 0;
    if (signatureLength) {
      const end = p.length - 20;
      op.paymasterData = `0x${p.slice(106, end - signatureLength * 2)}`;
      op.paymasterSignature = `0x${p.slice(end - signatureLength * 2, end)}`;
    }
  }
  return op;
}
