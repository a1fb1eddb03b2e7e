import type { Clock } from "@bundlekit/core";
import { Effect, Fiber, Layer } from "effect";
import { EngineClock } from "./ports.ts";

/**
 * The engine's `Clock` on Effect's: `now()` reads the current Effect `Clock`, and each engine
 * timer is an `Effect.sleep` in a fiber of the layer's context. Under `TestClock`, the engine's
 * bundling schedule, block polling and waits move only when the test adjusts the clock.
 */
export const effectClock: Layer.Layer<EngineClock> = Layer.effect(
  EngineClock,
  Effect.gen(function* () {
    const context = yield* Effect.context<never>();
    const fork = Effect.runForkWith(context);
    return yield* Effect.clockWith((clock) =>
      Effect.succeed<Clock>({
        now: () => clock.currentTimeMillisUnsafe(),
        setTimeout(callback, ms) {
          const fiber = fork(Effect.sleep(Math.max(0, ms)).pipe(Effect.andThen(Effect.sync(callback))));
          return { cancel: () => void fork(Fiber.interrupt(fiber)) };
        },
      }),
    );
  }),
);
