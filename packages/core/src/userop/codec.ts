import type { Hex, SignedAuthorization } from "viem";
import { InvalidParamsError } from "../errors/errors.ts";
import type { EntryPointVersion } from "../entrypoint/version.ts";
import type { UserOperation, UserOperationV06, UserOperationV07 } from "./types.ts";
import { isUserOperationV06 } from "./types.ts";
import { maxPaymasterSignatureSize, paymasterSignatureLength } from "./paymaster-signature.ts";
import {
  isAbsent,
  parseAddress,
  parseBytes,
  parseObject,
  parseQuantity,
  toQuantity,
} from "./wire.ts";

/**
 * `send` requires every field; `estimate` lets gas limits, fees and the signature be absent
 * (ERC-7769: they are used when given), filling zeros and an empty signature.
 */
export type DecodeMode = "send" | "estimate";

export interface DecodeUserOperationOptions {
  version: EntryPointVersion;
  mode?: DecodeMode;
  /** Path of the operation in the request, used in error messages. Default `params[0]`. */
  path?: string;
}

/** The 7702 marker an EIP-7702 account puts in `factory` (v0.8+). */
export const eip7702FactoryMarker = "0x7702";

/**
 * Decode a user operation from its JSON-RPC form for the given EntryPoint version. Accepts hex
 * strings and `{type:"BigNumber",hex}` objects for numbers and treats `null` as absent. Throws
 * `InvalidParamsError` naming the first bad field.
 */
export function decodeUserOperation(wire: unknown, options: DecodeUserOperationOptions): UserOperation {
  const { version, mode = "send", path = "params[0]" } = options;
  const o = parseObject(wire, path);
  const at = (name: string) => `${path}.${name}`;
  const required = (name: string) => {
    if (isAbsent(o[name])) throw new InvalidParamsError(at(name), "is required");
    return o[name];
  };
  // Gas fields are optional when estimating; the estimate fills them.
  const gas = (name: string, bits: number) =>
    mode === "estimate" && isAbsent(o[name]) ? 0n : parseQuantity(required(name), at(name), bits);
  const signature =
    mode === "estimate" && isAbsent(o.signature) ? "0x" : parseBytes(required("signature"), at("signature"));

  const sender = parseAddress(required("sender"), at("sender"));
  const nonce = parseQuantity(required("nonce"), at("nonce"));
  const callData = parseBytes(required("callData"), at("callData"));

  // Every version takes an EIP-7702 authorization: it rides in the bundle transaction's
  // authorization list, and the EntryPoint sees only the delegated account.
  const authorization = isAbsent(o.eip7702Auth) ? undefined : decodeAuthorization(o.eip7702Auth, at("eip7702Auth"));

  if (version === "0.6") {
    for (const name of ["factory", "paymaster", "paymasterSignature"]) {
      if (!isAbsent(o[name])) {
        throw new InvalidParamsError(at(name), "is not a v0.6 field (v0.6 uses initCode and paymasterAndData)");
      }
    }
    // v0.6's EntryPoint refuses gas limits and fees above 120 bits ("AA94 gas values overflow").
    const op: UserOperationV06 = {
      sender,
      nonce,
      initCode: isAbsent(o.initCode) ? "0x" : parseBytes(o.initCode, at("initCode")),
      callData,
      callGasLimit: gas("callGasLimit", 120),
      verificationGasLimit: gas("verificationGasLimit", 120),
      preVerificationGas: gas("preVerificationGas", 120),
      maxFeePerGas: gas("maxFeePerGas", 120),
      maxPriorityFeePerGas: gas("maxPriorityFeePerGas", 120),
      paymasterAndData: isAbsent(o.paymasterAndData) ? "0x" : parseBytes(o.paymasterAndData, at("paymasterAndData")),
      signature,
    };
    if (op.initCode !== "0x" && op.initCode.length < 42) {
      throw new InvalidParamsError(at("initCode"), "must start with a 20-byte factory address");
    }
    if (op.paymasterAndData !== "0x" && op.paymasterAndData.length < 42) {
      throw new InvalidParamsError(at("paymasterAndData"), "must start with a 20-byte paymaster address");
    }
    if (authorization) op.authorization = authorization;
    return op;
  }

  for (const name of ["initCode", "paymasterAndData"]) {
    if (!isAbsent(o[name])) {
      throw new InvalidParamsError(at(name), `is a v0.6 field; EntryPoint v${version} takes the unpacked ERC-7769 form`);
    }
  }
  // v0.7 packs gas limits and fees into 128-bit halves.
  const op: UserOperationV07 = {
    sender,
    nonce,
    callData,
    callGasLimit: gas("callGasLimit", 128),
    verificationGasLimit: gas("verificationGasLimit", 128),
    preVerificationGas: gas("preVerificationGas", 256),
    maxFeePerGas: gas("maxFeePerGas", 128),
    maxPriorityFeePerGas: gas("maxPriorityFeePerGas", 128),
    signature,
  };
  if (!isAbsent(o.factory)) {
    const marker = typeof o.factory === "string" && o.factory.toLowerCase() === eip7702FactoryMarker;
    if (marker && version === "0.7") {
      throw new InvalidParamsError(at("factory"), "is the EIP-7702 marker 0x7702, which needs EntryPoint v0.8 or later; on v0.7 an EIP-7702 account leaves factory out and sends eip7702Auth");
    }
    op.factory = marker ? eip7702FactoryMarker : parseAddress(o.factory, at("factory"));
    op.factoryData = isAbsent(o.factoryData) ? "0x" : parseBytes(o.factoryData, at("factoryData"));
  } else if (!isAbsent(o.factoryData) && o.factoryData !== "0x") {
    throw new InvalidParamsError(at("factoryData"), "is set but factory is absent");
  }
  if (!isAbsent(o.paymaster)) {
    op.paymaster = parseAddress(o.paymaster, at("paymaster"));
    op.paymasterVerificationGasLimit = gas("paymasterVerificationGasLimit", 128);
    op.paymasterPostOpGasLimit = gas("paymasterPostOpGasLimit", 128);
    op.paymasterData = isAbsent(o.paymasterData) ? "0x" : parseBytes(o.paymasterData, at("paymasterData"));
  } else {
    for (const name of ["paymasterData", "paymasterVerificationGasLimit", "paymasterPostOpGasLimit", "paymasterSignature"]) {
      if (!isAbsent(o[name]) && o[name] !== "0x" && o[name] !== "0x0") {
        throw new InvalidParamsError(at(name), "is set but paymaster is absent");
      }
    }
    // The zero paymaster gas limits of an estimate, which clients copy into the operation, are
    // kept (they pack to nothing), so the operation reads back as it was sent.
    if (o.paymasterVerificationGasLimit === "0x0") op.paymasterVerificationGasLimit = 0n;
    if (o.paymasterPostOpGasLimit === "0x0") op.paymasterPostOpGasLimit = 0n;
  }
  if (!isAbsent(o.paymasterSignature) && o.paymasterSignature !== "0x" && op.paymaster) {
    if (version !== "0.9") throw new InvalidParamsError(at("paymasterSignature"), "needs EntryPoint v0.9 or later");
    op.paymasterSignature = parseBytes(o.paymasterSignature, at("paymasterSignature"), maxPaymasterSignatureSize);
  }
  if (version === "0.9" && op.paymaster && !op.paymasterSignature) refuseBadSignatureSuffix(op, at("paymasterData"));
  if (authorization) op.authorization = authorization;
  return op;
}

/**
 * v0.9 reads a `paymasterData` that ends with the paymaster-signature magic as carrying a
 * signature of the length in the two bytes before it; a length that reaches back into the
 * paymaster's gas limits makes the EntryPoint revert (`InvalidPaymasterSignatureLength`).
 */
function refuseBadSignatureSuffix(op: UserOperationV07, path: string): void {
  const data = Buffer.from((op.paymasterData ?? "0x").slice(2), "hex");
  const paymasterAndData = Buffer.concat([Buffer.alloc(52), data]);
  if (paymasterSignatureLength(paymasterAndData) === undefined) {
    throw new InvalidParamsError(
      path,
      "ends with the paymaster-signature magic 0x22e325a297439656, but the signature length before it is longer than the paymasterData; send the signature as paymasterSignature",
    );
  }
}

function decodeAuthorization(value: unknown, path: string): SignedAuthorization {
  const o = parseObject(value, path);
  const field = (name: string) => {
    if (isAbsent(o[name])) throw new InvalidParamsError(`${path}.${name}`, "is required");
    return o[name];
  };
  const yParity = parseQuantity(field("yParity"), `${path}.yParity`, 8);
  if (yParity > 1n) throw new InvalidParamsError(`${path}.yParity`, "must be 0x0 or 0x1");
  return {
    address: parseAddress(field("address"), `${path}.address`),
    chainId: Number(parseQuantity(field("chainId"), `${path}.chainId`, 64)),
    nonce: Number(parseQuantity(field("nonce"), `${path}.nonce`, 64)),
    r: `0x${parseQuantity(field("r"), `${path}.r`).toString(16).padStart(64, "0")}` as Hex,
    s: `0x${parseQuantity(field("s"), `${path}.s`).toString(16).padStart(64, "0")}` as Hex,
    yParity: Number(yParity),
  };
}

/** The JSON-RPC form of a user operation: every number a hex quantity, v0.7+ unpacked. */
export type WireUserOperation = Record<string, string | Record<string, string>>;

/** Encode a user operation to its JSON-RPC form, as `eth_getUserOperationByHash` returns it. */
export function encodeUserOperation(op: UserOperation): WireUserOperation {
  const common = {
    sender: op.sender,
    nonce: toQuantity(op.nonce),
  };
  const gas = {
    callGasLimit: toQuantity(op.callGasLimit),
    verificationGasLimit: toQuantity(op.verificationGasLimit),
    preVerificationGas: toQuantity(op.preVerificationGas),
    maxFeePerGas: toQuantity(op.maxFeePerGas),
    maxPriorityFeePerGas: toQuantity(op.maxPriorityFeePerGas),
  };
  if (isUserOperationV06(op)) {
    return {
      ...common,
      initCode: op.initCode,
      callData: op.callData,
      ...gas,
      paymasterAndData: op.paymasterAndData,
      signature: op.signature,
      ...(op.authorization ? { eip7702Auth: encodeAuthorization(op.authorization) } : {}),
    };
  }
  const wire: WireUserOperation = { ...common };
  if (op.factory) {
    wire.factory = op.factory;
    wire.factoryData = op.factoryData ?? "0x";
  }
  Object.assign(wire, { callData: op.callData }, gas);
  if (op.paymaster) {
    wire.paymaster = op.paymaster;
    wire.paymasterVerificationGasLimit = toQuantity(op.paymasterVerificationGasLimit ?? 0n);
    wire.paymasterPostOpGasLimit = toQuantity(op.paymasterPostOpGasLimit ?? 0n);
    wire.paymasterData = op.paymasterData ?? "0x";
    if (op.paymasterSignature) wire.paymasterSignature = op.paymasterSignature;
  } else {
    if (op.paymasterVerificationGasLimit !== undefined) wire.paymasterVerificationGasLimit = toQuantity(op.paymasterVerificationGasLimit);
    if (op.paymasterPostOpGasLimit !== undefined) wire.paymasterPostOpGasLimit = toQuantity(op.paymasterPostOpGasLimit);
  }
  wire.signature = op.signature;
  if (op.authorization) wire.eip7702Auth = encodeAuthorization(op.authorization);
  return wire;
}

function encodeAuthorization(a: SignedAuthorization): Record<string, string> {
  return { chainId: toQuantity(a.chainId), address: a.address, nonce: toQuantity(a.nonce), yParity: toQuantity(a.yParity ?? 0), r: a.r, s: a.s };
}

/** Serialise a user operation for storage (its wire form as JSON). */
export function serializeUserOperation(op: UserOperation): string {
  return JSON.stringify(encodeUserOperation(op));
}

/** Read back what `serializeUserOperation` wrote. */
export function deserializeUserOperation(json: string, version: EntryPointVersion): UserOperation {
  return decodeUserOperation(JSON.parse(json), { version, path: "stored" });
}
