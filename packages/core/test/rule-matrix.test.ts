import { afterAll, beforeAll, describe, it } from "vitest";
import { ruleMatrix, ruleProbesFixture } from "./rule-probes-fixture.ts";

/**
 * ERC-7562 rule by rule, for the account, the factory and the paymaster, on every EntryPoint
 * version: each violation refused with -32502 naming the entity, the subject and the rule (and no
 * other), and its allowed variant admitted. Each case runs on an engine of its own over the file's
 * devnet, so no case sees another's pooled operations or reputation.
 */
let probes: Awaited<ReturnType<typeof ruleProbesFixture>>;

beforeAll(async () => {
  probes = await ruleProbesFixture();
}, 60_000);
afterAll(async () => {
  await probes?.close();
  await probes?.fixture.devnet.stop();
});

describe.each(["0.6", "0.7", "0.8", "0.9"] as const)("the ERC-7562 rule matrix on EntryPoint v%s", (version) => {
  // A loop rather than it.each, whose "$name" cuts names to 40 characters.
  for (const ruleCase of ruleMatrix) it(ruleCase.name, () => probes.expectRuleOutcome(version, ruleCase));
});
