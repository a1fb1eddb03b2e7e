import type { Address, Hash } from "viem";
import { describe, expect, it } from "vitest";
import {
  BundlerError,
  DuplicateUserOperationError,
  entryPointRefusal,
  FeeBelowBaseFeeError,
  InvalidParamsError,
  OutOfTimeRangeError,
  PaymasterDepositError,
  UnsupportedAggregatorError,
} from "../errors/errors.ts";
import { RpcError, RpcErrorCode, rpcErrorOf, toRpcError } from "./rpc-errors.ts";

const paymaster: Address = "0x00000000000000000000000000000000000000Aa";
const hash: Hash = `0x${"ab".repeat(32)}`;

describe("toRpcError: EntryPoint failures by their AAxx code (ERC-7769)", () => {
  it.each([
    ["AA24 signature error", "signatureInvalid", RpcErrorCode.signatureInvalid],
    ["AA34 signature error", "signatureInvalid", RpcErrorCode.signatureInvalid],
    ["AA22 expired or not due", "outOfTimeRange", RpcErrorCode.outOfTimeRange],
    ["AA32 paymaster expired or not due", "outOfTimeRange", RpcErrorCode.outOfTimeRange],
    [
      "AA31 paymaster deposit too low",
      "paymasterDepositTooLow",
      RpcErrorCode.paymasterDepositTooLow,
    ],
    ["AA30 paymaster not deployed", "paymasterRejected", RpcErrorCode.paymasterRejected],
    ["AA33 reverted", "paymasterRejected", RpcErrorCode.paymasterRejected],
    ["AA21 didn't pay prefund", "entryPointRejected", RpcErrorCode.entryPointRejected],
    ["AA23 reverted", "entryPointRejected", RpcErrorCode.entryPointRejected],
    ["validation reverted: boom", "entryPointRejected", RpcErrorCode.entryPointRejected],
  ] as const)("%s is %s, %d, with the reason as message and in data", (reason, kind, code) => {
    const error = entryPointRefusal(reason);
    expect(error.kind).toBe(kind);
    expect(toRpcError(error)).toMatchObject({ code, message: reason, data: { reason } });
  });

  it("AA34, the paymaster's signature, is -32507 naming the paymaster", () => {
    const wire = toRpcError(entryPointRefusal("AA34 signature error", { paymaster }));
    expect({ code: wire.code, message: wire.message, data: wire.data }).toEqual({
      code: -32507,
      message: "AA34 signature error",
      data: { reason: "AA34 signature error", paymaster },
    });
  });

  it("a paymaster's other refusal (-32501) names it; the EntryPoint's own (-32500) carries the revert data", () => {
    expect(
      toRpcError(entryPointRefusal("AA33 reverted", { paymaster, revertData: "0x12" })).data,
    ).toEqual({ reason: "AA33 reverted", paymaster, revertData: "0x12" });
    expect(toRpcError(entryPointRefusal("AA23 reverted", { revertData: "0x12" })).data).toEqual({
      reason: "AA23 reverted",
      revertData: "0x12",
    });
  });

  it("the validity window the engine checks is AA32 with its bounds and the paymaster in data", () => {
    const window = { validAfter: 0n, validUntil: 1_029n, unit: "seconds" as const, now: 1_000n, minValidity: 30n };
    const error = OutOfTimeRangeError.check("paymaster", window, paymaster)!;
    expect({ ...toRpcError(error), message: error.message }).toMatchObject({
      code: -32503,
      message:
        "AA32 paymaster expired or not due: validUntil 1029 is within 30 s (29 s from now): too soon to bundle",
      data: { validUntil: "0x405", validAfter: "0x0", paymaster },
    });
    expect(OutOfTimeRangeError.check("account", { ...window, validUntil: 1_030n })).toBeUndefined();
    expect(OutOfTimeRangeError.check("account", { ...window, validUntil: 999n })?.message).toBe(
      "AA22 expired or not due: validUntil 999 passed 1 s ago",
    );
    expect(OutOfTimeRangeError.check("account", { ...window, validAfter: 1_001n })?.message).toBe(
      "AA22 expired or not due: validAfter 1001 is 1 s from now",
    );
  });

  it("the mempool's deposit check is AA31, -32508, with the deposit and what the operations may cost", () => {
    const error = PaymasterDepositError.inPool(paymaster, {
      deposit: 10n,
      required: 16n,
      pooledOperations: 1,
    });
    const wire = toRpcError(error);
    expect(wire.code).toBe(-32508);
    expect(wire.message).toBe(
      `AA31 paymaster deposit too low: paymaster ${paymaster} deposit of 10 wei cannot cover its 1 operation in the mempool and this one: they may cost up to 16 wei`,
    );
    expect(wire.data).toEqual({ paymaster, deposit: "0xa", required: "0x10" });
  });

  it("an aggregator the bundler does not support is -32500 with the EntryPoint's AA24 text", () => {
    const wire = toRpcError(new UnsupportedAggregatorError("account", paymaster));
    expect(wire.code).toBe(-32500);
    expect(wire.message).toBe(
      `AA24 signature error: account requires aggregator ${paymaster}, which this bundler does not support`,
    );
    expect(wire.data).toEqual({ aggregator: paymaster });
  });
});

describe("toRpcError: distinct domain errors behind one wire code", () => {
  it("a fee below the base fee, a duplicate and a malformed field are all -32602, each with its own data", () => {
    expect(toRpcError(new FeeBelowBaseFeeError(1n, 2n))).toMatchObject({
      code: -32602,
      message: "invalid maxFeePerGas: 1 is below the current base fee 2",
      data: { field: "maxFeePerGas", reason: "1 is below the current base fee 2" },
    });
    expect(toRpcError(new DuplicateUserOperationError(hash))).toMatchObject({
      code: -32602,
      data: { userOpHash: hash },
    });
    expect(toRpcError(new InvalidParamsError("params[0].nonce", "is required"))).toMatchObject({
      code: -32602,
      message: "invalid params[0].nonce: is required",
      data: { field: "params[0].nonce", reason: "is required" },
    });
  });
});

describe("rpcErrorOf", () => {
  it("passes an RpcError as it is, maps a domain error, and leaves any other error to the caller", () => {
    const wire = new RpcError(-32601, "only over WebSocket", { method: "eth_subscribe" });
    expect(rpcErrorOf(wire)).toBe(wire);
    expect(rpcErrorOf(new FeeBelowBaseFeeError(1n, 2n))?.code).toBe(-32602);
    expect(rpcErrorOf(new Error("boom"))).toBeUndefined();
  });

  it("refuses at type-check a BundlerError whose kind is not a domain error's, and answers one made anyway with -32603 and its message", () => {
    class Refused extends BundlerError {
      // @ts-expect-error: "refused" is no DomainErrorKind; a new domain error joins DomainError, and toRpcError then needs its mapping
      override readonly kind = "refused";
    }
    expect(rpcErrorOf(new Refused("not today"))).toMatchObject({
      code: -32603,
      message: "not today",
    });
  });
});
