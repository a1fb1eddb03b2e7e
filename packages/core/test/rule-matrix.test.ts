import { parseEther } from "viem";
import { afterAll, beforeAll, describe, it } from "vitest";
import type { Bundler } from "../src/engine/create-bundler.ts";
import type { engineFixture } from "./fixtures.ts";
import { ruleMatrix, ruleProbesFixture } from "./rule-probes-fixture.ts";

/**
 * ERC-7562 rule by rule, for the account, the factory and the paymaster, on every EntryPoint
 * version: each violation refused with -32502 naming the entity, the subject and the rule, and its
 * allowed variant admitted.
 */
let fixture: Awaited<ReturnType<typeof engineFixture>>;
let bundler: Bundler;
let expectRuleOutcome: Awaited<ReturnType<typeof ruleProbesFixture>>["expectRuleOutcome"];

beforeAll(async () => {
  ({ fixture, expectRuleOutcome } = await ruleProbesFixture());
  ({ bundler } = await fixture.makeBundler({ config: { minStake: parseEther("1"), minUnstakeDelay: 10 } }));
}, 60_000);
afterAll(async () => {
  await bundler?.stop();
  await fixture?.devnet.stop();
});

describe.each(["0.6", "0.7", "0.8"] as const)("the ERC-7562 rule matrix on EntryPoint v%s", (version) => {
  it.each(ruleMatrix)("$name", (ruleCase) => expectRuleOutcome(bundler, version, ruleCase));
});
