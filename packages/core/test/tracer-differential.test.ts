import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultBundlerSettings } from "../src/engine/settings.ts";
import { createEntryPointRegistry } from "../src/entrypoint/registry.ts";
import type { ChainClient } from "../src/ports/chain-client.ts";
import type { TraceCallRequest, TracedValidation, ValidationTracer } from "../src/ports/validation-tracer.ts";
import { decodeValidationResult, validationCall } from "../src/validation/simulate.ts";
import { createInProcessTracer } from "../src/validation/tracers/in-process/in-process-tracer.ts";
import { createJsTracer } from "../src/validation/tracers/js/js-tracer.ts";
import { ruleViolations } from "../src/validation/validate-user-operation.ts";
import { ruleMatrix, ruleProbesFixture, ruleTestStake } from "./rule-probes-fixture.ts";

/**
 * The two ValidationTracers on every case of the rule matrix: the in-process one (prestate +
 * local EVM) and the node's JavaScript tracer must give the same normalised trace and the same
 * violations, all of them (rule, entity, address and subject), and those must be the case's.
 */
let setup: Awaited<ReturnType<typeof ruleProbesFixture>>;
let inProcess: ValidationTracer;
let js: ValidationTracer;

beforeAll(async () => {
  setup = await ruleProbesFixture();
  const client = setup.fixture.client as unknown as ChainClient;
  inProcess = createInProcessTracer({ client, chainId: setup.fixture.devnet.chainId, workers: 0 });
  js = createJsTracer({ client });
}, 60_000);
afterAll(async () => {
  await inProcess?.close?.();
  await setup?.fixture.devnet.stop();
});

const { reputation, validation } = defaultBundlerSettings;
const rules = { ...reputation, ...ruleTestStake, p256Precompile: validation.p256Precompile, maxPaymasterContextBytes: validation.maxPaymasterContextBytes };

describe.each(["0.6", "0.7", "0.8", "0.9"] as const)("in-process and JavaScript tracers on EntryPoint v%s", (version) => {
  // A loop rather than it.each, whose "$name" cuts names to 40 characters.
  for (const { name, broken, ...rule } of ruleMatrix) it(`${name}: same trace, same violations`, async () => {
    const { op, set } = await setup.ruleOp(version, rule);
    const entryPoint = createEntryPointRegistry().get(set.entryPoint);
    const simulation = validationCall(entryPoint, op);
    const request: TraceCallRequest = {
      call: { from: "0x0000000000000000000000000000000000000000", to: simulation.to, data: simulation.data, gas: 30_000_000n },
      stateOverride: simulation.stateOverride,
      entryPoint: entryPoint.address,
    };
    const [local, node] = await Promise.all([inProcess.trace(request), js.trace(request)]);
    expect(canonical(node)).toEqual(canonical(local));
    const violations = (traced: TracedValidation) => ruleViolations(rules, entryPoint, op, decodeValidationResult(entryPoint, op, traced.result), traced.trace);
    const [fromLocal, fromNode] = [violations(local), violations(node)];
    expect(fromNode).toEqual(fromLocal);
    expect(fromLocal.map(({ rule, entity }) => ({ rule, entity }))).toEqual(broken ? [{ rule: broken.rule, entity: broken.entity }] : []);
  });
});

/** The trace and call result as comparable data (the revert message wording is the node's own). */
function canonical({ result, trace }: TracedValidation) {
  return { reverted: result.reverted, data: result.data, trace };
}
