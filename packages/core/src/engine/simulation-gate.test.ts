import { describe, expect, it } from "vitest";
import { BusyError } from "../errors/errors.ts";
import { RpcErrorCode, toRpcError } from "../rpc/rpc-errors.ts";
import { createSimulatedClock } from "../simulation/simulated-clock.ts";
import { createSimulationGate } from "./simulation-gate.ts";

/** A simulation that runs until the test ends it. */
function held() {
  let finish!: (value: string) => void;
  let started = false;
  const work = () => {
    started = true;
    return new Promise<string>((resolve) => {
      finish = resolve;
    });
  };
  return { work, finish: (value: string) => finish(value), started: () => started };
}

describe("simulation gate", () => {
  it("runs up to the cap, queues up to the queue in arrival order, and refuses the next with -32005 without running it", async () => {
    const gate = createSimulationGate({ maxConcurrent: 2, maxQueued: 1 });
    const [a, b, c, d] = [held(), held(), held(), held()];
    const runs = [a, b, c].map((sim) => gate.run(sim.work));
    expect([a.started(), b.started(), c.started()]).toEqual([true, true, false]);

    const refused = await gate.run(d.work).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(BusyError);
    expect(toRpcError(refused as BusyError)).toMatchObject({
      code: RpcErrorCode.limitExceeded,
      data: { running: 2, queued: 1, retry: true },
    });
    expect(d.started()).toBe(false);

    a.finish("a");
    await expect(runs[0]).resolves.toBe("a");
    expect(c.started()).toBe(true); // the freed slot went to the one waiting
    b.finish("b");
    c.finish("c");
    await expect(Promise.all(runs)).resolves.toEqual(["a", "b", "c"]);
  });

  it("frees the slot of a simulation that fails", async () => {
    const gate = createSimulationGate({ maxConcurrent: 1, maxQueued: 0 });
    await expect(gate.run(() => Promise.reject(new Error("node down")))).rejects.toThrow(
      "node down",
    );
    await expect(gate.run(async () => "next")).resolves.toBe("next");
  });

  it("lets a waiting simulation go when its signal aborts: it never runs, rejects with the reason, and its place goes to the next", async () => {
    const gate = createSimulationGate({ maxConcurrent: 1, maxQueued: 2 });
    const [a, b, c] = [held(), held(), held()];
    const running = gate.run(a.work);
    const abort = new AbortController();
    const abandoned = gate.run(b.work, abort.signal).catch((error: unknown) => error);
    const next = gate.run(c.work);
    abort.abort(new Error("caller left"));
    expect(await abandoned).toEqual(new Error("caller left"));
    a.finish("a");
    await running;
    await Promise.resolve();
    expect([b.started(), c.started()]).toEqual([false, true]);
    c.finish("c");
    expect(await next).toBe("c");
    // Both slots free again: a third and a fourth run, with nothing waiting in between.
    const [d, e] = [held(), held()];
    const runs = [gate.run(d.work), gate.run(e.work)];
    expect([d.started(), e.started()]).toEqual([true, false]);
    d.finish("d");
    await runs[0];
    await Promise.resolve();
    expect(e.started()).toBe(true);
    e.finish("e");
    await runs[1];
  });

  it("refuses at once a simulation whose signal has already aborted", async () => {
    const gate = createSimulationGate({ maxConcurrent: 1, maxQueued: 1 });
    const a = held();
    const abort = new AbortController();
    abort.abort(new Error("gone"));
    await expect(gate.run(a.work, abort.signal)).rejects.toThrow("gone");
    expect(a.started()).toBe(false);
  });

  it("answers busy a simulation that waits maxWaitMs without a slot, without running it, and runs the others", async () => {
    const clock = createSimulatedClock();
    const gate = createSimulationGate({ maxConcurrent: 1, maxQueued: 2, maxWaitMs: 5_000, clock });
    const [a, b, c] = [held(), held(), held()];
    const running = gate.run(a.work);
    const first = gate.run(b.work).catch((error: unknown) => error);
    await clock.advanceBy(2_000);
    const second = gate.run(c.work);
    await clock.advanceBy(3_000);

    const refused = await first;
    expect(refused).toBeInstanceOf(BusyError);
    expect(toRpcError(refused as BusyError)).toMatchObject({
      code: RpcErrorCode.limitExceeded,
      message:
        "the bundler is busy: waited 5000 ms without a free simulation slot (1 running, 1 waiting); retry in a moment",
      data: { running: 1, queued: 1, retry: true },
    });
    expect(b.started()).toBe(false);
    a.finish("a");
    await running;
    await Promise.resolve();
    expect(c.started()).toBe(true); // admitted before its own deadline, which no longer fires
    await clock.advanceBy(10_000);
    c.finish("c");
    await expect(second).resolves.toBe("c");
    expect(clock.pending).toBe(0);
  });

  it("advises retrying after the time its queue takes to drain at the recent pace", async () => {
    const clock = createSimulatedClock();
    const gate = createSimulationGate({ maxConcurrent: 2, maxQueued: 2, clock });
    const busyData = async () =>
      toRpcError((await gate.run(held().work).catch((e: unknown) => e)) as BusyError).data;

    const first = [held(), held(), held(), held()];
    const runs = first.map((sim) => gate.run(sim.work));
    expect(await busyData()).toMatchObject({ retryAfter: 1 }); // no pace yet: a second
    // Each simulation takes 3 s: 2 running and 2 waiting on 2 slots drain in 6 s.
    await clock.advanceBy(3_000);
    first[0]!.finish("a");
    first[1]!.finish("b");
    await Promise.all(runs.slice(0, 2));
    const next = [held(), held()];
    runs.push(...next.map((sim) => gate.run(sim.work)));
    expect(await busyData()).toMatchObject({ running: 2, queued: 2, retryAfter: 6 });
    first[2]!.finish("c");
    first[3]!.finish("d");
    await Promise.all(runs.slice(2, 4));
    await Promise.resolve();
    for (const sim of next) sim.finish("done");
    await Promise.all(runs);
  });
});
