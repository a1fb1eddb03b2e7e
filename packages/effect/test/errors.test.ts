import * as core from "@bundlekit/core";
import { describe, expect, it } from "vitest";
import { Schema } from "effect";
import { BundlekitErrorSchema, type FeeBelowBaseFee, toBundlekitError } from "../src/errors.ts";
import { address, examples } from "./domain-errors.ts";

describe("toBundlekitError: one tag per domain error", () => {
  it("gives every domain error a tag of its own", () => {
    const tags = Object.values(examples).map((error) => toBundlekitError(error)._tag);
    expect(new Set(tags).size).toBe(tags.length);
  });

  it("tells apart failures that share a wire code: a fee below the base fee, a duplicate and a malformed field are all -32602", () => {
    const fee = toBundlekitError(examples.feeBelowBaseFee);
    const duplicate = toBundlekitError(examples.duplicateUserOperation);
    const malformed = toBundlekitError(examples.invalidParams);
    expect([fee._tag, duplicate._tag, malformed._tag]).toEqual([
      "FeeBelowBaseFee",
      "DuplicateUserOperation",
      "InvalidParams",
    ]);
    expect([fee.code, duplicate.code, malformed.code]).toEqual([-32602, -32602, -32602]);
  });

  it("tells apart a banned entity, a full sender and a full paymaster, all -32504", () => {
    const tags = [examples.throttledOrBanned, examples.senderLimit, examples.entityLimit].map(
      (error) => toBundlekitError(error),
    );
    expect(tags.map((t) => [t._tag, t.code])).toEqual([
      ["ThrottledOrBanned", -32504],
      ["SenderLimit", -32504],
      ["EntityLimit", -32504],
    ]);
  });

  it("carries the domain error's facts with its wire code, message and data", () => {
    expect(toBundlekitError(examples.feeBelowBaseFee)).toMatchObject({
      _tag: "FeeBelowBaseFee",
      maxFeePerGas: 1n,
      baseFeePerGas: 2n,
      code: -32602,
      message: "invalid maxFeePerGas: 1 is below the current base fee 2",
      data: { field: "maxFeePerGas", reason: "1 is below the current base fee 2" },
    });
    expect(toBundlekitError(examples.paymasterRejected)).toMatchObject({
      _tag: "PaymasterRejected",
      paymaster: address,
      failure: { code: 33, entity: "paymaster" },
      code: -32501,
      data: { reason: "AA33 reverted", paymaster: address },
    });
  });

  it("keeps the node's failure and anything unknown as InternalError, and a method not served as MethodNotFound", () => {
    expect(toBundlekitError(examples.infrastructure)).toMatchObject({
      _tag: "InternalError",
      code: -32603,
      message: "the node did not answer",
    });
    expect(toBundlekitError(new Error("boom"))).toMatchObject({
      _tag: "InternalError",
      code: -32603,
      message: "boom",
    });
    expect(toBundlekitError(new core.RpcError(-32601, "no such method"))).toMatchObject({
      _tag: "MethodNotFound",
      code: -32601,
    });
  });

  it("declares each domain error's facts as fields of its schema, and carries them on the instance", () => {
    for (const domain of Object.values(examples)) {
      const tagged = toBundlekitError(domain);
      const fields = Object.keys((tagged.constructor as unknown as { fields: Record<string, unknown> }).fields);
      const facts = Object.keys(domain).filter((key) => key !== "name" && key !== "kind");
      expect(facts.filter((fact) => !fields.includes(fact)), tagged._tag).toEqual([]);
      for (const fact of facts) expect((tagged as unknown as Record<string, unknown>)[fact], `${tagged._tag}.${fact}`).toEqual((domain as unknown as Record<string, unknown>)[fact]);
    }
  });

  it("encodes every tag through its Schema to JSON (its tag, wire code, message, data and facts), and decodes that back into its class", () => {
    const encode = Schema.encodeUnknownSync(BundlekitErrorSchema);
    const decode = Schema.decodeUnknownSync(BundlekitErrorSchema);
    for (const domain of Object.values(examples)) {
      const tagged = toBundlekitError(domain);
      const wire = JSON.parse(JSON.stringify(encode(tagged)));
      expect(wire).toMatchObject({ _tag: tagged._tag, code: tagged.code, message: tagged.message, ...(tagged.data ? { data: tagged.data } : {}) });
      const decoded = decode(wire);
      expect(decoded).toBeInstanceOf(tagged.constructor);
      expect(decoded).toEqual(tagged);
    }
    const fee = toBundlekitError(examples.feeBelowBaseFee);
    expect(JSON.parse(JSON.stringify(encode(fee)))).toMatchObject({ maxFeePerGas: String((fee as FeeBelowBaseFee).maxFeePerGas) });
    expect(() => decode({ _tag: "FeeBelowBaseFee", code: -32602, message: "too low" })).toThrow(/Missing key/);
  });
});
