import type { Address, Hex, SignedAuthorization } from "viem";
import { getAddress } from "../utils/get-address.ts";

/**
 * A v0.6 user operation in domain form: numbers are bigints, bytes are hex. Same shape as viem's
 * `UserOperation<"0.6">`, so viem's hashing and packing apply unchanged. `authorization` (the
 * wire's `eip7702Auth`) rides in the bundle transaction; the v0.6 EntryPoint never sees it.
 */
export interface UserOperationV06 {
  sender: Address;
  nonce: bigint;
  initCode: Hex;
  callData: Hex;
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  paymasterAndData: Hex;
  signature: Hex;
  authorization?: SignedAuthorization | undefined;
}

/**
 * A v0.7+ user operation in the unpacked form of ERC-7769, with its EIP-7702 `authorization`
 * (the wire's `eip7702Auth`), if any. Only v0.8+ knows the `0x7702` factory marker, which binds
 * the delegate into the userOpHash. `paymasterSignature` exists only for v0.9 and later: the
 * paymaster's signature, appended to `paymasterAndData` after `paymasterData` with its length and
 * a magic (`userop/paymaster-signature.ts`), and left out of the userOpHash.
 */
export interface UserOperationV07 {
  sender: Address;
  nonce: bigint;
  factory?: Address | undefined;
  factoryData?: Hex | undefined;
  callData: Hex;
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  paymaster?: Address | undefined;
  paymasterVerificationGasLimit?: bigint | undefined;
  paymasterPostOpGasLimit?: bigint | undefined;
  paymasterData?: Hex | undefined;
  paymasterSignature?: Hex | undefined;
  signature: Hex;
  authorization?: SignedAuthorization | undefined;
}

/** A user operation of any supported EntryPoint version. */
export type UserOperation = UserOperationV06 | UserOperationV07;

/** True for the v0.6 layout (`initCode`/`paymasterAndData`). */
export function isUserOperationV06(op: UserOperation): op is UserOperationV06 {
  return "initCode" in op;
}

/** The account's nonce key (upper 192 bits) and sequence (lower 64 bits). */
export function splitNonce(nonce: bigint): { key: bigint; sequence: bigint } {
  return { key: nonce >> 64n, sequence: nonce & 0xffff_ffff_ffff_ffffn };
}

/** The factory that deploys the sender, if the operation deploys it. */
export function factoryOf(op: UserOperation): Address | undefined {
  if (isUserOperationV06(op)) {
    return op.initCode.length >= 42 ? getAddress(op.initCode.slice(0, 42)) : undefined;
  }
  return op.factory;
}

/** The paymaster that pays for the operation, if any. */
export function paymasterOf(op: UserOperation): Address | undefined {
  if (isUserOperationV06(op)) {
    return op.paymasterAndData.length >= 42
      ? getAddress(op.paymasterAndData.slice(0, 42))
      : undefined;
  }
  return op.paymaster;
}
