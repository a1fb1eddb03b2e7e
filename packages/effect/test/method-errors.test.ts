import type * as core from "@bundlekit/core";
import type { Bundler as Engine, UserOperation } from "@bundlekit/core";
import { Effect, Exit } from "effect";
import { describe, expect, expectTypeOf, it } from "vitest";
import { Bundler, type BundlerShape } from "../src/bundler.ts";
import type { ExecutionReverted, InternalError, ProposalNotOpen, SignatureInvalid } from "../src/errors.ts";
import { toBundlekitError } from "../src/errors.ts";
import { type BundlerMethod, methodErrorTags } from "../src/method-errors.ts";
import { address, examples, hash } from "./domain-errors.ts";
import { reachableErrorKinds } from "./reachable-error-kinds.ts";

/** The error channel of an Effect. */
type ErrorOf<T> = T extends Effect.Effect<unknown, infer E, unknown> ? E : never;
type Errors<M extends BundlerMethod> = ErrorOf<ReturnType<BundlerShape[M]>>;

const op = { sender: address } as UserOperation;

/** Call method `method` of the service with placeholder arguments (the engine below ignores them). */
const call = (bundler: BundlerShape, method: BundlerMethod): Effect.Effect<unknown, { readonly _tag: string; readonly message: string }> => {
  switch (method) {
    case "sendUserOperation":
      return bundler.sendUserOperation(op, address);
    case "estimateUserOperationGas":
      return bundler.estimateUserOperationGas(op, address);
    case "getUserOperationByHash":
      return bundler.getUserOperationByHash(hash);
    case "getUserOperationReceipt":
      return bundler.getUserOperationReceipt(hash);
    case "sendBundleNow":
      return bundler.sendBundleNow();
    case "proposeBundle":
      return bundler.proposeBundle({ from: address, blockNumber: 1n, timestamp: 1n, baseFee: 1n, gasBudget: 1n });
    case "commitBundle":
      return bundler.commitBundle("p1");
    case "releaseBundle":
      return bundler.releaseBundle("p1");
  }
};

/** An engine whose every method rejects with `error`: the face's mapping, apart from the engine's paths. */
const failingEngine = (error: unknown): Engine =>
  new Proxy({} as Engine, {
    get: () => () => Promise.reject(error),
  });

/** The domain error (core) behind each tag, from one example of each kind. */
const domainErrorOf = new Map(Object.values(examples).map((error) => [toBundlekitError(error)._tag, error]));

const failureOf = async (method: BundlerMethod, error: unknown) => {
  const exit = await Effect.runPromiseExit(call(Bundler.make(failingEngine(error)), method));
  if (Exit.isSuccess(exit)) throw new Error(`${method} succeeded`);
  const failure = exit.cause.reasons.find((reason) => reason._tag === "Fail");
  if (failure?._tag !== "Fail") throw new Error(`${method} did not fail with a typed error`);
  return failure.error;
};

describe("Bundler: each method fails only with the tags the engine can raise there", () => {
  it("says so in the types: a receipt lookup cannot fail with SignatureInvalid, admission cannot fail with ExecutionReverted", () => {
    expectTypeOf<Errors<"getUserOperationReceipt">>().toEqualTypeOf<InternalError>();
    expectTypeOf<Errors<"getUserOperationByHash">>().toEqualTypeOf<InternalError>();
    expectTypeOf<Errors<"sendBundleNow">>().toEqualTypeOf<InternalError>();
    expectTypeOf<Errors<"releaseBundle">>().toEqualTypeOf<ProposalNotOpen | InternalError>();
    expectTypeOf<SignatureInvalid>().not.toExtend<Errors<"getUserOperationReceipt">>();
    expectTypeOf<ExecutionReverted>().toExtend<Errors<"estimateUserOperationGas">>();
    expectTypeOf<ExecutionReverted>().not.toExtend<Errors<"sendUserOperation">>();
    expectTypeOf<SignatureInvalid>().toExtend<Errors<"sendUserOperation">>();
  });

  const methods = Object.keys(methodErrorTags) as BundlerMethod[];
  for (const method of methods) {
    it(`${method}: each of its tags, from the engine's domain error`, async () => {
      for (const tag of methodErrorTags[method]) {
        const domain = domainErrorOf.get(tag);
        expect(domain, tag).toBeDefined();
        const error = await failureOf(method, domain);
        expect({ tag: error._tag, message: error.message }).toEqual({ tag, message: toBundlekitError(domain).message });
      }
    });

    it(`${method}: a domain error it is not known to raise is an InternalError with its message`, async () => {
      const allowed: readonly string[] = methodErrorTags[method];
      const outside = [...domainErrorOf].filter(([tag]) => !allowed.includes(tag));
      expect(outside.length).toBeGreaterThan(0);
      for (const [, domain] of outside) {
        const error = await failureOf(method, domain);
        expect({ tag: error._tag, message: error.message }).toEqual({ tag: "InternalError", message: domain.message });
      }
    });
  }
});

/**
 * Domain errors the engine's code raises on a method's path that do not reach the caller as their
 * own tag, and why: each becomes `InternalError`. The analysis counts every error created on the way.
 */
const keptInternal: Partial<Record<BundlerMethod, Partial<Record<core.DomainErrorKind, string>>>> = {
  getUserOperationByHash: { unsupportedEntryPoint: "the EntryPoint of an operation the store holds: one the bundler serves" },
};

describe("Bundler: each method's tags are the domain errors its path in the engine's code raises", () => {
  const methods = Object.keys(methodErrorTags) as BundlerMethod[];
  const reachable = reachableErrorKinds(methods);
  const tagOf = (kind: string) => toBundlekitError(examples[kind as core.DomainErrorKind])._tag;

  for (const method of methods) {
    it(`${method}: lists every tag its path can raise, and none it cannot`, () => {
      const kinds = [...reachable.get(method)!];
      const raised = new Set(kinds.filter((kind) => !keptInternal[method]?.[kind as core.DomainErrorKind]).map(tagOf));
      raised.add("InternalError");
      expect([...methodErrorTags[method]].sort()).toEqual([...raised].sort());
      for (const kind of Object.keys(keptInternal[method] ?? {})) expect(kinds, `${method} no longer raises ${kind}`).toContain(kind);
    });
  }
});
