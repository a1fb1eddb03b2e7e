import { expect } from "vitest";
import { BundlerError, type DomainError } from "../src/errors/errors.ts";
import { type RpcError, toRpcError } from "../src/rpc/rpc-errors.ts";

/** What a domain error answers on the wire (`toRpcError`: code, message, data); fails the test for any other error. */
export function onWire(error: unknown): RpcError<Record<string, unknown>> {
  expect(error).toBeInstanceOf(BundlerError);
  return toRpcError(error as DomainError);
}

/** `promise`, rejecting with what its domain error answers on the wire: `await expect(answered(p)).rejects.toMatchObject({ code })`. */
export function answered<T>(promise: Promise<T>): Promise<T> {
  return promise.catch((error: unknown) => {
    throw onWire(error);
  });
}

/** `run`, throwing what its domain error answers on the wire: `expect(answering(() => f())).toThrow(…)`. */
export function answering(run: () => unknown): () => unknown {
  return () => {
    try {
      return run();
    } catch (error) {
      throw onWire(error);
    }
  };
}

/** The error `run` throws; fails the test when it returns. */
export function thrownBy(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected it to throw");
}
