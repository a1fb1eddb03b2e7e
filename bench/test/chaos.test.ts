import type { Hash } from "viem";
import { describe, expect, it } from "vitest";
import {
  chaosFailures,
  type ServedOperation,
  type StoredOperation,
  tallyChaosRun,
} from "../chaos-accounting.ts";
import { parseChaosOptions } from "../chaos-options.ts";
import { killSchedule, seededRandom } from "../kill-schedule.ts";
import { UsageError } from "../script.ts";
import type { IncludedOperation } from "../user-operation-events.ts";

const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}` as Hash;
const event = (n: number, success = true, block = 10n): IncludedOperation => ({
  userOpHash: hash(n),
  success,
  transactionHash: hash(1000 + n),
  blockNumber: block,
});
const servedFully: ServedOperation = { receipt: true, lookup: true };

describe("chaos accounting", () => {
  it("accounts for every accepted operation: included, dropped with its reason, or lost", () => {
    const figures = tallyChaosRun({
      offered: [
        { hash: hash(1), accepted: true },
        { hash: hash(2), accepted: true },
        { hash: hash(3), accepted: true },
        { hash: hash(4), accepted: true },
        { hash: hash(5), accepted: true },
        { hash: hash(6), accepted: false, rejection: "-32500: AA25 invalid account nonce" },
      ],
      events: [event(1), event(2, false)],
      stored: new Map<Hash, StoredOperation>([
        [hash(1), { status: "included" }],
        [hash(2), { status: "included" }],
        [hash(3), { status: "dropped", failureReason: "AA21 didn't pay prefund" }],
        [hash(4), { status: "submitted" }],
      ]),
      served: new Map([
        [hash(1), servedFully],
        [hash(2), servedFully],
      ]),
    });
    expect(figures).toMatchObject({
      offered: 6,
      accepted: 5,
      rejected: { count: 1, reasons: [{ reason: "-32500: AA25 invalid account nonce", count: 1 }] },
      included: 2,
      includedReverted: 1,
      includedNotAccepted: 0,
      includedTwice: 0,
      dropped: { count: 1, reasons: [{ reason: "dropped: AA21 didn't pay prefund", count: 1 }] },
      // Still "submitted" in the store, and one the store never held: neither on chain nor reported.
      lost: {
        count: 2,
        reasons: [
          { reason: "submitted", count: 1 },
          { reason: "unknown", count: 1 },
        ],
      },
      receiptMissing: 0,
      lookupMissing: 0,
    });
    expect(figures.examples.lost).toEqual([hash(4), hash(5)]);
    expect(chaosFailures(figures)).toEqual(["2 lost"]);
  });

  it("counts an operation on chain twice, and included operations the services do not serve", () => {
    const figures = tallyChaosRun({
      offered: [
        { hash: hash(1), accepted: true },
        { hash: hash(2), accepted: true },
        { hash: hash(3), accepted: false },
      ],
      events: [event(1, true, 10n), event(1, true, 12n), event(2), event(3)],
      stored: new Map<Hash, StoredOperation>([
        [hash(1), { status: "included" }],
        // The service recorded it dropped, but it is on chain: included, and its receipt must be served.
        [hash(2), { status: "dropped", failureReason: "AA25 invalid account nonce" }],
        [hash(3), { status: "included" }],
      ]),
      served: new Map([
        [hash(1), servedFully],
        [hash(2), { receipt: false, lookup: false }],
        [hash(3), { receipt: true, lookup: false }],
      ]),
    });
    expect(figures).toMatchObject({
      accepted: 2,
      included: 2,
      includedNotAccepted: 1,
      includedTwice: 1,
      dropped: { count: 0 },
      lost: { count: 0 },
      receiptMissing: 1,
      lookupMissing: 2,
    });
    expect(figures.examples).toEqual({
      lost: [],
      includedTwice: [hash(1)],
      receiptMissing: [hash(2)],
      lookupMissing: [hash(2), hash(3)],
    });
    expect(chaosFailures(figures)).toEqual([
      "1 included twice",
      "1 receipts missing",
      "2 lookups missing",
    ]);
  });

  it("finds nothing wrong when every accepted operation is on chain once and served", () => {
    const figures = tallyChaosRun({
      offered: [{ hash: hash(1), accepted: true }],
      events: [event(1)],
      stored: new Map([[hash(1), { status: "included" }]]),
      served: new Map([[hash(1), servedFully]]),
    });
    expect(chaosFailures(figures)).toEqual([]);
  });
});

describe("kill schedule", () => {
  it("spreads kills over the window, at least the gap apart, the same for the same seed", () => {
    for (const seed of [1, 2, 3, 42, 2 ** 31 - 1]) {
      const times = killSchedule({
        count: 5,
        fromMs: 2_000,
        toMs: 50_000,
        minGapMs: 5_000,
        random: seededRandom(seed),
      });
      expect(times).toHaveLength(5);
      expect(times[0]).toBeGreaterThanOrEqual(2_000);
      expect(times.at(-1)).toBeLessThanOrEqual(50_000);
      for (let i = 1; i < times.length; i++)
        expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(5_000);
      expect(
        killSchedule({
          count: 5,
          fromMs: 2_000,
          toMs: 50_000,
          minGapMs: 5_000,
          random: seededRandom(seed),
        }),
      ).toEqual(times);
    }
    const a = killSchedule({
      count: 5,
      fromMs: 0,
      toMs: 100_000,
      minGapMs: 1_000,
      random: seededRandom(1),
    });
    const b = killSchedule({
      count: 5,
      fromMs: 0,
      toMs: 100_000,
      minGapMs: 1_000,
      random: seededRandom(2),
    });
    expect(a).not.toEqual(b);
  });

  it("refuses more kills than the window holds", () => {
    expect(() =>
      killSchedule({
        count: 5,
        fromMs: 2_000,
        toMs: 20_000,
        minGapMs: 5_000,
        random: seededRandom(1),
      }),
    ).toThrow("5 kills at least 5 s apart need 20 s; the load lasts 18 s");
  });

  it("pnpm chaos refuses a run too short for its kills, saying what to change (it prints that with the usage and exits 2)", () => {
    expect(() => parseChaosOptions(["--ops", "100", "--rate", "10", "--kills", "5"])).toThrow(
      new UsageError(
        "5 kills at least 5 s apart need 20 s; the load lasts 8 s: raise --ops or lower --rate or --kills",
      ),
    );
  });
});
