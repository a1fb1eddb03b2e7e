import { describe, expect, it } from "vitest";
import { EntryPointRejectionError, RpcErrorCode } from "./errors.ts";
import { parseFailureReason } from "./failure-reason.ts";

describe("parseFailureReason", () => {
  it.each([
    ["AA13 initCode failed or OOG", 13, "factory"],
    ["AA25 invalid account nonce", 25, "account"],
    ["AA33 reverted", 33, "paymaster"],
    ["AA95 out of gas", 95, undefined],
  ] as const)("%s → code %d, blames %s", (text, code, entity) => {
    expect(parseFailureReason(text)).toEqual({ code, entity, text });
  });

  it("a reason without an AAxx code has neither code nor entity", () => {
    expect(parseFailureReason("validation reverted: out of gas")).toEqual({ code: undefined, entity: undefined, text: "validation reverted: out of gas" });
  });
});

describe("EntryPointRejectionError codes (ERC-7769)", () => {
  it.each([
    ["AA24 signature error", RpcErrorCode.signatureInvalid],
    ["AA34 signature error", RpcErrorCode.paymasterRejected],
    ["AA22 expired or not due", RpcErrorCode.outOfTimeRange],
    ["AA32 paymaster expired or not due", RpcErrorCode.outOfTimeRange],
    ["AA31 paymaster deposit too low", RpcErrorCode.paymasterDepositTooLow],
    ["AA33 reverted", RpcErrorCode.paymasterRejected],
    ["AA23 reverted", RpcErrorCode.entryPointRejected],
    ["validation reverted: boom", RpcErrorCode.entryPointRejected],
  ] as const)("%s → %d", (reason, code) => {
    expect(new EntryPointRejectionError(reason).code).toBe(code);
  });
});
