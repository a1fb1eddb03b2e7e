import { describe, expect, it } from "vitest";
import { BusyError } from "../errors/errors.ts";
import { RpcErrorCode, toRpcError } from "../rpc/rpc-errors.ts";
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
});
