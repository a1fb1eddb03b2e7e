import type { Address, Hash, Hex } from "viem";
import { getUserOperationHash as viemGetUserOperationHash } from "viem/account-abstraction";
import type { EntryPoint } from "../entrypoint/registry.ts";
import { keccak256, keccak256Bytes } from "../utils/keccak.ts";
import { paymasterAndDataForHash, paymasterSignatureSuffix } from "./paymaster-signature.ts";
import { factoryOf, isUserOperationV06, type UserOperation, type UserOperationV07 } from "./types.ts";

/**
 * The userOpHash the EntryPoint computes: for v0.6/v0.7 `keccak(abi.encode(keccak(packed), ep,
 * chainId))`, for v0.8+ the EIP-712 hash with domain ("ERC4337", "1", chainId, ep). v0.9's covers
 * `paymasterAndData` up to the paymaster signature, then its magic (`paymaster-signature.ts`),
 * whether the signature came as `paymasterSignature` or at the end of `paymasterData`. Computed
 * once on admission and stored with the operation.
 *
 * The words are laid out here and hashed natively (`utils/keccak.ts`): viem's version costs about
 * 0.1 ms an operation in ABI encoding and JavaScript keccak. A v0.8+ EIP-7702 operation (factory
 * `0x7702`), whose hash takes the delegate from its authorization, goes to viem's.
 */
export function getUserOperationHash(op: UserOperation, entryPoint: EntryPoint, chainId: number): Hash {
  const factory = factoryOf(op)?.toLowerCase();
  // Only v0.8+ read the marker (v0.6 and v0.7 hash initCode as it is, even with an authorization).
  const marker = factory === "0x7702" || factory === "0x7702000000000000000000000000000000000000";
  if (marker && entryPoint.version !== "0.6" && entryPoint.version !== "0.7") {
    // viem's takes the 7702 delegate into the initCode hash; the paymaster's bytes as the EntryPoint hashes them.
    const hashed = !isUserOperationV06(op) && entryPoint.version === "0.9" && op.paymaster ? paymasterHashedAs(op) : op;
    return viemGetUserOperationHash({ userOperation: hashed, entryPointAddress: entryPoint.address, entryPointVersion: entryPoint.version, chainId });
  }
  if (isUserOperationV06(op)) {
    const packed = [
      address(op.sender),
      uint(op.nonce),
      hashOf(bytes(op.initCode)),
      hashOf(bytes(op.callData)),
      uint(op.callGasLimit),
      uint(op.verificationGasLimit),
      uint(op.preVerificationGas),
      uint(op.maxFeePerGas),
      uint(op.maxPriorityFeePerGas),
      hashOf(bytes(op.paymasterAndData)),
    ];
    return keccak256(Buffer.concat([hashOf(Buffer.concat(packed)), address(entryPoint.address), uint(BigInt(chainId))]));
  }
  const packed = packedWords(op, entryPoint.version === "0.9");
  if (entryPoint.version === "0.7") {
    return keccak256(Buffer.concat([hashOf(Buffer.concat(packed)), address(entryPoint.address), uint(BigInt(chainId))]));
  }
  const structHash = hashOf(Buffer.concat([packedUserOperationTypeHash, ...packed]));
  return keccak256(Buffer.concat([eip712Prefix, domainSeparator(entryPoint.address, chainId), structHash]));
}

/**
 * `op` with `paymasterData` such that viem hashes its `paymasterAndData` as v0.9's EntryPoint
 * does: the covered bytes after the gas limits, and no separate `paymasterSignature`.
 */
function paymasterHashedAs(op: UserOperationV07): UserOperationV07 {
  const { paymasterSignature: _, ...rest } = op;
  const covered = paymasterAndDataForHash(paymasterAndDataOf(op));
  return { ...rest, paymasterData: `0x${Buffer.from(covered.subarray(52)).toString("hex")}` };
}

/** The `paymasterAndData` the EntryPoint receives, with v0.9's paymaster signature suffix. */
function paymasterAndDataOf(op: UserOperationV07): Buffer {
  if (!op.paymaster) return Buffer.alloc(0);
  return Buffer.concat([
    bytes(op.paymaster),
    halfWord(op.paymasterVerificationGasLimit ?? 0n),
    halfWord(op.paymasterPostOpGasLimit ?? 0n),
    bytes(op.paymasterData ?? "0x"),
    bytes(paymasterSignatureSuffix(op)),
  ]);
}

/** The v0.7+ `PackedUserOperation` as the hash encodes it: eight words, `bytes` fields by their hash. */
function packedWords(op: UserOperationV07, paymasterSignatures: boolean): Uint8Array[] {
  const initCode = op.factory ? Buffer.concat([bytes(op.factory), bytes(op.factoryData ?? "0x")]) : Buffer.alloc(0);
  const sent = paymasterAndDataOf(op);
  const paymasterAndData = paymasterSignatures ? paymasterAndDataForHash(sent) : sent;
  return [
    address(op.sender),
    uint(op.nonce),
    hashOf(initCode),
    hashOf(bytes(op.callData)),
    Buffer.concat([halfWord(op.verificationGasLimit), halfWord(op.callGasLimit)]),
    uint(op.preVerificationGas),
    Buffer.concat([halfWord(op.maxPriorityFeePerGas), halfWord(op.maxFeePerGas)]),
    hashOf(paymasterAndData),
  ];
}

const text = (value: string) => Buffer.from(value, "utf8");
/** keccak256 of the empty string: what most operations' initCode and paymasterAndData hash to. */
const emptyHash = keccak256Bytes(Buffer.alloc(0));
const hashOf = (data: Uint8Array) => (data.length === 0 ? emptyHash : keccak256Bytes(data));
const bytes = (hex: Hex) => Buffer.from(hex.slice(2), "hex");
const uint = (value: bigint) => Buffer.from(value.toString(16).padStart(64, "0"), "hex");
const halfWord = (value: bigint) => Buffer.from(value.toString(16).padStart(32, "0"), "hex");
const address = (value: Address) => uint(BigInt(value));

const eip712Prefix = Buffer.from([0x19, 0x01]);
const packedUserOperationTypeHash = hashOf(
  text("PackedUserOperation(address sender,uint256 nonce,bytes initCode,bytes callData,bytes32 accountGasLimits,uint256 preVerificationGas,bytes32 gasFees,bytes paymasterAndData)"),
);
const domainTypeHash = hashOf(text("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"));
const domainSeparators = new Map<string, Uint8Array>();

/** The EIP-712 domain separator of ("ERC4337", "1", chainId, entryPoint), computed once per pair. */
function domainSeparator(entryPoint: Address, chainId: number): Uint8Array {
  const key = `${entryPoint.toLowerCase()}/${chainId}`;
  let separator = domainSeparators.get(key);
  if (!separator) {
    separator = hashOf(Buffer.concat([domainTypeHash, hashOf(text("ERC4337")), hashOf(text("1")), uint(BigInt(chainId)), address(entryPoint)]));
    domainSeparators.set(key, separator);
  }
  return separator;
}
