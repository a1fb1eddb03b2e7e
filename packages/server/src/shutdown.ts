import { once } from "node:events";
import type { ServerResponse } from "node:http";
import { setTimeout as delay } from "node:timers/promises";
import type { Logger, RequestDrain } from "@bundlekit/core";
import type { JsonRpcServer } from "@bundlekit/transport-jsonrpc";

/** How long answers given at the end of the grace period get to be written before connections close. */
const flushMs = 500;

/**
 * The part of the grace period that requests in flight get: all but the last second (half of it
 * under 2 s), which is left for closing connections, the engine and the store.
 */
export const requestGraceMs = (shutdownGraceMs: number) =>
  shutdownGraceMs - Math.min(1000, shutdownGraceMs / 2);

/**
 * A close for `running` that ends within `graceMs`: stop accepting connections, answer new
 * requests on open ones with `ShuttingDownError`, let requests in flight finish for up to
 * `graceMs` and answer those still running with `ShuttingDownError`, write those answers, then
 * close every connection (WebSockets with 1001).
 */
export function gracefulClose(
  running: JsonRpcServer,
  drain: RequestDrain,
): (graceMs: number) => Promise<void> {
  const open = new Set<ServerResponse>();
  running.server.on("request", (_request, response: ServerResponse) => {
    open.add(response);
    response.once("close", () => open.delete(response));
  });
  return async (graceMs) => {
    running.server.close();
    await drain.drain(graceMs);
    const cancel = new AbortController();
    await Promise.race([
      Promise.all([...open].map((response) => once(response, "close"))),
      delay(flushMs, undefined, { signal: cancel.signal }).catch(() => {}),
    ]);
    cancel.abort();
    await running.close();
  };
}

/**
 * On SIGTERM or SIGINT, exit the process once `shutdownGraceMs` has passed, however far the
 * orderly close got (a bundling run waiting on a hung node, a store that does not answer). Safe
 * by the engine's crash model: every accepted operation is already durable in the store, and a
 * bundle in flight is reconciled with the chain on the next start.
 */
export function exitAfterGracePeriod(shutdownGraceMs: number, logger: Logger): void {
  const arm = () => {
    setTimeout(() => {
      logger.warn(
        "the shutdown grace period ran out; exiting with work unfinished (accepted operations are stored)",
        { shutdownGraceMs },
      );
      process.exit(0);
    }, shutdownGraceMs).unref();
  };
  process.once("SIGTERM", arm);
  process.once("SIGINT", arm);
}
