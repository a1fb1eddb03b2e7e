import { describe, expect, it } from "vitest";
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
