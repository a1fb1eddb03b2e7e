import type { Clock } from "@bundlekit/core";
import { Effect, FiberSet, Layer } from "effect";
import { EngineClock } from "./ports.ts";

/**
 * The engine's `Clock` on Effect's: `now()` reads the current Effect `Clock`, and each engine
 * timer is an `Effect.sleep` in a fiber of the layer's scope. Under `TestClock`, the engine's
 * bundling schedule, block polling and waits move only when the test adjusts the clock. Closing
 * the layer's scope interrupts every timer still waiting; a timer set after it never fires.
 */
export const effectClock: Layer.Layer<EngineClock> = Layer.effect(
  EngineClock,
  Effect.gen(function* () {
    const run = yield* FiberSet.makeRuntime<never, void>();
    return yield* Effect.clockWith((clock) =>
      Effect.succeed<Clock>({
        now: () => clock.currentTimeMillisUnsafe(),
        setTimeout(callback, ms) {
          const fiber = run(Effect.sleep(Math.max(0, ms)).pipe(Effect.andThen(Effect.sync(callback))));
          return { cancel: () => fiber.interruptUnsafe() };
        },
      }),
    );
  }),
);
