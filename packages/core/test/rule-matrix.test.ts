import { getAddress, parseEther } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bundler } from "../src/engine/create-bundler.ts";
import { RpcErrorCode } from "../src/errors/errors.ts";
import { type engineFixture, rejection } from "./fixtures.ts";
import { ruleMatrix, ruleProbesFixture } from "./rule-probes-fixture.ts";

/**
 * ERC-7562 rule by rule, for the account, the factory and the paymaster, on every EntryPoint
 * version: each violation refused with -32502 naming the entity, the subject and the rule, and its
 * allowed variant admitted.
 */
let fixture: Awaited<ReturnType<typeof engineFixture>>;
let bundler: Bundler;
let ruleOp: Awaited<ReturnType<typeof ruleProbesFixture>>["ruleOp"];

beforeAll(async () => {
  ({ fixture, ruleOp } = await ruleProbesFixture());
  ({ bundler } = await fixture.makeBundler({ config: { minStake: parseEther("1"), minUnstakeDelay: 10 } }));
}, 60_000);
afterAll(async () => {
  await bundler?.stop();
  await fixture?.devnet.stop();
});

describe.each(["0.6", "0.7", "0.8"] as const)("the ERC-7562 rule matrix on EntryPoint v%s", (version) => {
  it.each(ruleMatrix)("$name", async ({ name: _, broken, ...rules }) => {
    const { op, set, sender } = await ruleOp(version, rules);
    const sent = bundler.sendUserOperation(op, set.entryPoint);
    if (!broken) {
      await expect(sent).resolves.toMatch(/^0x[0-9a-f]{64}$/);
      return;
    }
    const error = await rejection(sent);
    expect(error.code, error.message).toBe(RpcErrorCode.opcodeOrStorageRule);
    const at = getAddress({ account: sender, factory: set.factory, paymaster: set.paymaster }[broken.entity]);
    expect(error.message).toMatch(new RegExp(`^${broken.entity} ${at}\\b.*${escapeRegExp(broken.subject)}.*\\(${broken.rule}\\)`, "i"));
    expect(error.data).toMatchObject({ rule: broken.rule, [broken.entity]: at });
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
