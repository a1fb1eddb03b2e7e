import type { Logger } from "@bundlekit/core";
import { Effect, Layer } from "effect";
import { EngineLogger } from "./ports.ts";

/**
 * The engine's `Logger` onto Effect's logging: each line becomes `Effect.log*` with its fields as
 * log annotations, so whatever `Logger` the program installs (JSON lines, pretty, your own) writes
 * it. Each line is written synchronously, in the call: no fiber is left running, and a line logged
 * as the scope closes is not lost. The engine never puts a secret in its fields.
 */
export const effectLogger: Layer.Layer<EngineLogger> = Layer.effect(
  EngineLogger,
  Effect.gen(function* () {
    const run = Effect.runSyncExitWith(yield* Effect.context<never>());
    const at =
      (log: (message: string) => Effect.Effect<void>) =>
      (message: string, fields: Record<string, unknown> = {}) =>
        void run(log(message).pipe(Effect.annotateLogs(stringify(fields))));
    return {
      debug: at((m) => Effect.logDebug(m)),
      info: at((m) => Effect.logInfo(m)),
      warn: at((m) => Effect.logWarning(m)),
      error: at((m) => Effect.logError(m)),
    } satisfies Logger;
  }),
);

/** Log annotations are plain values: bigints as decimal strings. */
function stringify(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, typeof value === "bigint" ? value.toString() : value]));
}
