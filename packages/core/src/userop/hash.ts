import type { Address, Hash, Hex } from "viem";
import { getUserOperationHash as viemGetUserOperationHash } from "viem/account-abstraction";
import type { EntryPoint } from "../entrypoint/registry.ts";
import { isHexAddress } from "../utils/get-address.ts";
import { keccak256, keccak256Bytes, keccak256Into } from "../utils/keccak.ts";
import { paymasterAndDataForHash, paymasterSignatureSuffix } from "./paymaster-signature.ts";
import { writeHexDigits, writeUint } from "./write-words.ts";
import { factoryOf, isUserOperationV06, type UserOperation, type UserOperationV07 } from "./types.ts";

/**
 * The userOpHash the EntryPoint computes: for v0.6/v0.7 `keccak(abi.encode(keccak(packed), ep,
 * chainId))`, for v0.8+ the EIP-712 hash with domain ("ERC4337", "1", chainId, ep). v0.9's covers
 * `paymasterAndData` up to the paymaster signature, then its magic (`paymaster-signature.ts`),
 * whether the signature came as `paymasterSignature` or at the end of `paymasterData`. Computed
 * once on admission and stored with the operation.
 *
 * The words are laid out here and hashed in WebAssembly (`utils/keccak.ts`), each field's hash
 * written where it goes: viem's version costs about 0.1 ms an operation in ABI encoding and JavaScript keccak. A v0.8+ EIP-7702 operation (factory
 * `0x7702`), whose hash takes the delegate in place of the marker, goes to viem's: the delegate of
 * its authorization, else `delegate`, the one in the sender's code now, which the EntryPoint reads
 * (`_getEip7702Delegate`; `readHashDelegate` reads it).
 */
export function getUserOperationHash(op: UserOperation, entryPoint: EntryPoint, chainId: number, delegate?: Address): Hash {
  if (hashesDelegate(op, entryPoint.version)) {
    // viem's takes the 7702 delegate into the initCode hash; the paymaster's bytes as the EntryPoint hashes them.
    const delegated = !op.authorization && delegate ? { ...op, authorization: { address: delegate } as NonNullable<UserOperation["authorization"]> } : op;
    const hashed = !isUserOperationV06(delegated) && entryPoint.version === "0.9" && delegated.paymaster ? paymasterHashedAs(delegated) : delegated;
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
  if (!isPlain(op)) {
    // Out of its fields' ranges, or not a plain address: viem's answers (or refuses).
    return viemGetUserOperationHash({ userOperation: op, entryPointAddress: entryPoint.address, entryPointVersion: entryPoint.version, chainId });
  }
  if (entryPoint.version === "0.7") {
    writePackedWords(scratch.packed, 0, op, false);
    keccak256Into(scratch.packed, scratch.outer07, 0);
    scratch.outer07.set(entryPointAndChain(entryPoint.address, chainId), 32);
    return keccak256(scratch.outer07);
  }
  scratch.struct.set(packedUserOperationTypeHash, 0);
  writePackedWords(scratch.struct, 32, op, entryPoint.version === "0.9");
  scratch.outer712.set(eip712Prefix, 0);
  scratch.outer712.set(domainSeparator(entryPoint.address, chainId), 2);
  keccak256Into(scratch.struct, scratch.outer712, 34);
  return keccak256(scratch.outer712);
}

/**
 * Whether the EntryPoint hashes the operation's initCode with the sender's EIP-7702 delegate in
 * place of the `0x7702` marker: v0.8 and later (v0.6 and v0.7 hash initCode as it is).
 */
export function hashesDelegate(op: UserOperation, version: EntryPoint["version"]): boolean {
  const factory = factoryOf(op)?.toLowerCase();
  const marker = factory === "0x7702" || factory === "0x7702000000000000000000000000000000000000";
  return marker && version !== "0.6" && version !== "0.7";
}

/**
 * The buffers a v0.7+ hash is laid out in, reused: each hash is written and taken before the
 * next begins (nothing awaits in between), and every admission takes one.
 */
const scratch = {
  paymasterAndData: Buffer.alloc(256),
  packed: Buffer.alloc(256),
  outer07: Buffer.alloc(96),
  struct: Buffer.alloc(288),
  outer712: Buffer.alloc(66),
};

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
  if (!op.paymaster) return empty;
  return Buffer.concat([
    bytes(op.paymaster),
    halfWord(op.paymasterVerificationGasLimit ?? 0n),
    halfWord(op.paymasterPostOpGasLimit ?? 0n),
    bytes(op.paymasterData ?? "0x"),
    bytes(paymasterSignatureSuffix(op)),
  ]);
}

/**
 * `paymasterAndDataOf` laid out in `scratch.paymasterAndData` (grown as needed) when the
 * paymaster is 20 bytes of hex and there is no separate paymaster signature: valid until the next
 * operation is hashed. A sponsored operation's bytes are hashed at admission without buffers of their own.
 */
function sentPaymasterAndData(op: UserOperationV07): Buffer {
  if (!op.paymaster) return empty;
  if (op.paymasterSignature || !isHexAddress(op.paymaster)) return paymasterAndDataOf(op);
  const data = op.paymasterData ?? "0x";
  const dataLength = (data.length - 2) >> 1;
  if (scratch.paymasterAndData.length < 52 + dataLength) scratch.paymasterAndData = Buffer.alloc(2 * (52 + dataLength));
  const target = scratch.paymasterAndData;
  writeHexDigits(target, 0, op.paymaster, 20);
  writeUint(target, 20, 16, op.paymasterVerificationGasLimit ?? 0n);
  writeUint(target, 36, 16, op.paymasterPostOpGasLimit ?? 0n);
  // As `Buffer.from` reads it: whole bytes, up to the first that is not hex.
  const written = target.write(data.slice(2), 52, dataLength, "hex");
  return target.subarray(0, 52 + written);
}

/**
 * The v0.7+ `PackedUserOperation` as the hash encodes it, written into `target` at `at`: eight
 * words, `bytes` fields by their hash. One buffer an operation rather than one a field, and
 * numbers written as numbers, not hex: every operation is hashed at admission.
 */
function writePackedWords(target: Buffer, at: number, op: UserOperationV07, paymasterSignatures: boolean): void {
  const initCode = op.factory ? Buffer.concat([bytes(op.factory), bytes(op.factoryData ?? "0x")]) : empty;
  const sent = sentPaymasterAndData(op);
  const paymasterAndData = paymasterSignatures ? paymasterAndDataForHash(sent) : sent;
  target.fill(0, at, at + 12);
  writeHexDigits(target, at + 12, op.sender, 20);
  writeUint(target, at + 32, 32, op.nonce);
  hashInto(initCode, target, at + 64);
  if (op.callData === "0x") target.set(emptyHash, at + 96);
  else hashInto(bytes(op.callData), target, at + 96);
  writeUint(target, at + 128, 16, op.verificationGasLimit);
  writeUint(target, at + 144, 16, op.callGasLimit);
  writeUint(target, at + 160, 32, op.preVerificationGas);
  writeUint(target, at + 192, 16, op.maxPriorityFeePerGas);
  writeUint(target, at + 208, 16, op.maxFeePerGas);
  hashInto(paymasterAndData, target, at + 224);
}

const wordLimit = 1n << 256n;
const halfLimit = 1n << 128n;
const inWord = (value: bigint) => value >= 0n && value < wordLimit;
const inHalf = (value: bigint | undefined) => value === undefined || (value >= 0n && value < halfLimit);

/** Whether `writePackedWords` lays `op` out as the EntryPoint does: a plain sender, and every value within its word or half word. */
function isPlain(op: UserOperationV07): boolean {
  return (
    isHexAddress(op.sender) &&
    inWord(op.nonce) &&
    inWord(op.preVerificationGas) &&
    [op.verificationGasLimit, op.callGasLimit, op.maxPriorityFeePerGas, op.maxFeePerGas, op.paymasterVerificationGasLimit, op.paymasterPostOpGasLimit].every(inHalf)
  );
}

/** The last two words of a v0.6/v0.7 hash's outer encoding: the EntryPoint and the chain id, computed once per pair. */
function entryPointAndChain(entryPoint: Address, chainId: number): Buffer {
  return perEntryPoint(entryPointAndChains, entryPoint, chainId, () => Buffer.concat([address(entryPoint), uint(BigInt(chainId))]));
}
const entryPointAndChains = new Map<string, Map<number, Buffer>>();

/**
 * What `make` gives for an EntryPoint on a chain, kept in `cache` by the address as given (a
 * registry's one string, looked up without building a key) and the chain id. The values depend
 * only on the address's digits, not its letter case.
 */
function perEntryPoint<T>(cache: Map<string, Map<number, T>>, entryPoint: Address, chainId: number, make: () => T): T {
  let byChain = cache.get(entryPoint);
  if (!byChain) {
    byChain = new Map();
    cache.set(entryPoint, byChain);
  }
  let value = byChain.get(chainId);
  if (value === undefined) {
    value = make();
    byChain.set(chainId, value);
  }
  return value;
}

const text = (value: string) => Buffer.from(value, "utf8");
const empty = Buffer.alloc(0);
/** keccak256 of the empty string: what most operations' initCode and paymasterAndData hash to. */
const emptyHash = keccak256Bytes(empty);
const hashOf = (data: Uint8Array) => (data.length === 0 ? emptyHash : keccak256Bytes(data));
const hashInto = (data: Uint8Array, target: Uint8Array, at: number) => (data.length === 0 ? target.set(emptyHash, at) : keccak256Into(data, target, at));
const bytes = (hex: Hex) => Buffer.from(hex.slice(2), "hex");
const uint = (value: bigint) => Buffer.from(value.toString(16).padStart(64, "0"), "hex");
const halfWord = (value: bigint) => Buffer.from(value.toString(16).padStart(32, "0"), "hex");
const address = (value: Address) => uint(BigInt(value));

const eip712Prefix = Buffer.from([0x19, 0x01]);
const packedUserOperationTypeHash = hashOf(
  text("PackedUserOperation(address sender,uint256 nonce,bytes initCode,bytes callData,bytes32 accountGasLimits,uint256 preVerificationGas,bytes32 gasFees,bytes paymasterAndData)"),
);
const domainTypeHash = hashOf(text("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"));
const domainSeparators = new Map<string, Map<number, Uint8Array>>();

/** The EIP-712 domain separator of ("ERC4337", "1", chainId, entryPoint), computed once per pair. */
function domainSeparator(entryPoint: Address, chainId: number): Uint8Array {
  return perEntryPoint(domainSeparators, entryPoint, chainId, () =>
    hashOf(Buffer.concat([domainTypeHash, hashOf(text("ERC4337")), hashOf(text("1")), uint(BigInt(chainId)), address(entryPoint)])),
  );
}
