import type { Clock, Timer } from "../ports/clock.ts";

/** A `Clock` whose time moves only when told, firing due timers in order. */
export interface SimulatedClock extends Clock {
  /** Move time to `time`, firing every timer due by then, each at its own due time, and letting the engine's work settle after each. */
  advanceTo(time: number): Promise<void>;
  /** `advanceTo(now() + ms)`. */
  advanceBy(ms: number): Promise<void>;
  /** Timers set and not yet fired. */
  readonly pending: number;
}

interface Scheduled {
  due: number;
  order: number;
  callback: () => void;
  cancelled: boolean;
}

/**
 * Simulated time for the real engine: `setTimeout` files a timer; `advanceTo` fires them in due
 * order (ties in the order they were set). After each timer the clock yields one turn of the
 * event loop, so promise chains the timer started (the engine's awaits on simulated ports, which
 * never touch real I/O) run to completion before time moves on.
 */
export function createSimulatedClock(start = 0): SimulatedClock {
  let now = start;
  let order = 0;
  const heap: Scheduled[] = [];
  const before = (a: Scheduled, b: Scheduled) => a.due < b.due || (a.due === b.due && a.order < b.order);

  function push(item: Scheduled) {
    heap.push(item);
    for (let i = heap.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  function pop(): Scheduled | undefined {
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0 && last) {
      heap[0] = last;
      for (let i = 0; ; ) {
        const [l, r] = [2 * i + 1, 2 * i + 2];
        let smallest = i;
        if (l < heap.length && before(heap[l]!, heap[smallest]!)) smallest = l;
        if (r < heap.length && before(heap[r]!, heap[smallest]!)) smallest = r;
        if (smallest === i) break;
        [heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!];
        i = smallest;
      }
    }
    return top;
  }

  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

  const clock: SimulatedClock = {
    now: () => now,
    setTimeout(callback, ms): Timer {
      const item: Scheduled = { due: now + Math.max(0, ms), order: order++, callback, cancelled: false };
      push(item);
      return {
        cancel: () => {
          item.cancelled = true;
        },
      };
    },
    async advanceTo(time) {
      await settle();
      while (heap.length > 0 && heap[0]!.due <= time) {
        const next = pop()!;
        if (next.cancelled) continue;
        now = Math.max(now, next.due);
        next.callback();
        await settle();
      }
      now = Math.max(now, time);
    },
    advanceBy: (ms) => clock.advanceTo(now + ms),
    get pending() {
      return heap.filter((item) => !item.cancelled).length;
    },
  };
  return clock;
}
