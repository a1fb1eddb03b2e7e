import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChainClient } from "../src/ports/chain-client.ts";
import { createEntryPointRegistry } from "../src/entrypoint/registry.ts";
import { ethCall } from "../src/validation/eth-call.ts";
import { validationCall } from "../src/validation/simulate.ts";
import { fetchBlockEnvironment, fetchPrestate } from "../src/validation/tracers/prestate.ts";
import { runTracedCall } from "../src/validation/tracers/in-process/run-traced-call.ts";
import { engineFixture } from "./fixtures.ts";

let fixture: Awaited<ReturnType<typeof engineFixture>>;
beforeAll(async () => {
  fixture = await engineFixture();
});
afterAll(() => fixture?.devnet.stop());

describe("in-process re-execution on the node's prestate", () => {
  it.each(["0.6", "0.7", "0.8", "0.9"] as const)("v%s: a new SimpleAccount's validation returns exactly what eth_call returns, reading nothing outside the prestate", async (version) => {
    const { bundler } = await fixture.makeBundler();
    const account = await fixture.makeAccount(version);
    const op = await fixture.makeOperation(bundler, account, { to: account.address, value: 0n });
    const entryPoint = createEntryPointRegistry().get(account.entryPoint.address);
    const client = fixture.client as unknown as ChainClient;
    const simulation = validationCall(entryPoint, op);
    const call = { from: "0x0000000000000000000000000000000000000000" as const, to: simulation.to, data: simulation.data, gas: 30_000_000n };
    const expected = await ethCall(client, { ...call, stateOverride: simulation.stateOverride });
    const [prestate, block] = await Promise.all([fetchPrestate(client, call, simulation.stateOverride), fetchBlockEnvironment(client)]);
    const traced = await runTracedCall({
      request: { call, stateOverride: simulation.stateOverride, entryPoint: entryPoint.address },
      prestate,
      block,
      chainId: fixture.devnet.chainId,
      p256Precompile: false,
    });
    expect(traced.missing).toEqual([]);
    expect(traced.result).toMatchObject({ reverted: expected.reverted, data: expected.data });
    // The deployment (through the SenderCreator) created the sender with CREATE2, then the account validated.
    const [deployment, validation] = traced.trace.phases.filter((p) => p.to !== entryPoint.address.toLowerCase());
    expect(deployment!.creates).toEqual([expect.objectContaining({ opcode: "CREATE2", address: account.address.toLowerCase() })]);
    expect(validation!.to).toBe(account.address.toLowerCase());
    expect(validation!.opcodes).toEqual({});
    // Code hashes of what it used (the factory, the account's implementation), not of the EntryPoint's simulation code.
    expect(Object.keys(traced.trace.codeHashes).length).toBeGreaterThanOrEqual(2);
    expect(traced.trace.codeHashes).not.toHaveProperty(entryPoint.address.toLowerCase());
  });

  it("runs concurrent validations one at a time on its EVM: each result is its own eth_call's", async () => {
    const { bundler } = await fixture.makeBundler();
    const client = fixture.client as unknown as ChainClient;
    const runs = await Promise.all(
      (["0.7", "0.7", "0.7", "0.8", "0.8", "0.6"] as const).map(async (version) => {
        const account = await fixture.makeAccount(version);
        const op = await fixture.makeOperation(bundler, account, { to: account.address, value: 0n });
        const entryPoint = createEntryPointRegistry().get(account.entryPoint.address);
        const simulation = validationCall(entryPoint, op);
        const call = { from: "0x0000000000000000000000000000000000000000" as const, to: simulation.to, data: simulation.data, gas: 30_000_000n };
        const [expected, prestate, block] = await Promise.all([
          ethCall(client, { ...call, stateOverride: simulation.stateOverride }),
          fetchPrestate(client, call, simulation.stateOverride),
          fetchBlockEnvironment(client),
        ]);
        return { expected, input: { request: { call, stateOverride: simulation.stateOverride, entryPoint: entryPoint.address }, prestate, block, chainId: fixture.devnet.chainId, p256Precompile: false } };
      }),
    );
    const traced = await Promise.all(runs.map(({ input }) => runTracedCall(input)));
    traced.forEach((output, i) => {
      expect(output.missing).toEqual([]);
      expect(output.result).toMatchObject({ reverted: runs[i]!.expected.reverted, data: runs[i]!.expected.data });
    });
  });
});
