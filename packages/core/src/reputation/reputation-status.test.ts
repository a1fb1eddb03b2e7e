import { describe, expect, it } from "vitest";
import { reputationStatus } from "./reputation-status.ts";

/** ERC-7562's defaults. */
const parameters = { minInclusionDenominator: 10, throttlingSlack: 10, banSlack: 50 };
const statusOf = (opsSeen: number, opsIncluded: number) =>
  reputationStatus({ opsSeen, opsIncluded }, parameters);

describe("an entity's standing (reputationStatus, ERC-7562)", () => {
  it("is ok for a new entity", () => {
    expect(statusOf(0, 0)).toBe("ok");
  });

  it("is throttled once opsSeen / 10, rounded down, exceeds opsIncluded + 10", () => {
    expect(statusOf(109, 0)).toBe("ok"); // 10, not above 10
    expect(statusOf(110, 0)).toBe("throttled"); // 11
    expect(statusOf(159, 5)).toBe("ok"); // 15, not above 15
    expect(statusOf(160, 5)).toBe("throttled"); // 16
  });

  it("is banned once opsSeen / 10, rounded down, exceeds opsIncluded + 50", () => {
    expect(statusOf(509, 0)).toBe("throttled"); // 50, not above 50
    expect(statusOf(510, 0)).toBe("banned"); // 51
    expect(statusOf(609, 10)).toBe("throttled"); // 60, not above 60
    expect(statusOf(610, 10)).toBe("banned"); // 61
  });

  it("takes its thresholds from the parameters", () => {
    const strict = { minInclusionDenominator: 2, throttlingSlack: 1, banSlack: 3 };
    expect(reputationStatus({ opsSeen: 3, opsIncluded: 0 }, strict)).toBe("ok"); // 1
    expect(reputationStatus({ opsSeen: 4, opsIncluded: 0 }, strict)).toBe("throttled"); // 2
    expect(reputationStatus({ opsSeen: 8, opsIncluded: 0 }, strict)).toBe("banned"); // 4
  });
});
