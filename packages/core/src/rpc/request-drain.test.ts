import { describe, expect, it } from "vitest";
import { ShuttingDownError } from "../errors/errors.ts";
import { createSimulatedClock } from "../simulation/simulated-clock.ts";
import { createRequestDrain } from "./request-drain.ts";
import { toRpcError } from "./rpc-errors.ts";

describe("request drain", () => {
  it("lets requests in flight finish within the grace period and refuses new ones", async () => {
    const clock = createSimulatedClock();
    const drain = createRequestDrain(clock);
    let finish!: (value: string) => void;
    const running = drain.run(() => new Promise<string>((resolve) => (finish = resolve)));
    expect(drain.inFlight).toBe(1);

    const drained = drain.drain(1000);
    await expect(drain.run(async () => "late")).rejects.toBeInstanceOf(ShuttingDownError);
    finish("done");
    await expect(running).resolves.toBe("done");
    await drained;
    expect(drain.inFlight).toBe(0);
  });

  it("answers the requests still running when the grace period ends with ShuttingDownError (-32603)", async () => {
    const clock = createSimulatedClock();
    const drain = createRequestDrain(clock);
    const hung = drain.run(() => new Promise<never>(() => {}));
    const answer = hung.catch((error: unknown) => error);
    const drained = drain.drain(1000);
    await clock.advanceBy(999);
    expect(drain.inFlight).toBe(1);
    await clock.advanceBy(1);
    await drained;
    expect(await answer).toBeInstanceOf(ShuttingDownError);
    expect(toRpcError((await answer) as ShuttingDownError)).toMatchObject({ code: -32603, data: { retry: true } });
    expect(drain.inFlight).toBe(0);
  });

  it("resolves at once with nothing in flight, and the same way when asked twice", async () => {
    const drain = createRequestDrain(createSimulatedClock());
    await drain.drain(1000);
    await drain.drain(1000);
    await expect(drain.run(async () => "late")).rejects.toBeInstanceOf(ShuttingDownError);
  });
});
