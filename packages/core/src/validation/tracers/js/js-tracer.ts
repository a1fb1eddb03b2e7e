import type { Address, Hex } from "viem";
import { debugTraceCall } from "../../../chain/debug-trace-call.ts";
import { InfrastructureError } from "../../../errors/errors.ts";
import type { ChainClient } from "../../../ports/chain-client.ts";
import type { ValidationTracer } from "../../../ports/validation-tracer.ts";
import type { PhaseTrace } from "../../../ports/validation-trace.ts";
import { codeHashesOf, fetchPrestate, rpcCall } from "../prestate.ts";
import { erc7562JsTracer } from "./erc7562-js-tracer.ts";

/** What the JavaScript tracer's `result` returns. */
interface JsTraceResult {
  phases: (Omit<PhaseTrace, "calls" | "creates"> & {
    calls: (Omit<PhaseTrace["calls"][number], "value"> & { value: Hex })[];
    creates: (Omit<PhaseTrace["creates"][number], "address"> & { address: Address | null })[];
  })[];
  keccak: Hex[];
  output: Hex;
  error: string | null;
  errors: string[];
}

/**
 * A `ValidationTracer` that runs the ERC-7562 collector as a JavaScript tracer in the node's
 * `debug_traceCall` (overrides as `stateOverrides`, the spelling anvil and geth honour), for
 * nodes where running the EVM in-process is not wanted. It costs the node 240–370 ms of CPU per
 * validation on anvil, against about 1 ms for the in-process tracer's prestate. Code hashes come
 * from a `prestateTracer` call without storage.
 */
export function createJsTracer(parameters: { client: ChainClient }): ValidationTracer {
  const { client } = parameters;
  const tracers = new Map<string, string>();
  return {
    name: "js",
    async trace(request) {
      const ep = request.entryPoint.toLowerCase();
      const tracer = tracers.get(ep) ?? erc7562JsTracer(ep);
      tracers.set(ep, tracer);
      const overrides = request.stateOverride ? { stateOverrides: request.stateOverride } : {};
      const [raw, prestate] = await Promise.all([
        debugTraceCall<JsTraceResult>(client, rpcCall(request.call), { tracer, ...overrides }).catch((error: Error) => {
          throw new InfrastructureError(`debug_traceCall with the ERC-7562 JavaScript tracer failed: ${error.message?.split("\n")[0]}`, { cause: error });
        }),
        fetchPrestate(client, request.call, request.stateOverride, { disableStorage: true }),
      ]);
      if (raw.errors.length > 0) throw new InfrastructureError(`the ERC-7562 JavaScript tracer failed: ${raw.errors[0]}`);
      return {
        result: raw.error === null ? { reverted: false, data: raw.output } : { reverted: true, data: raw.output, message: raw.error },
        trace: {
          phases: raw.phases.map((phase) => ({
            ...phase,
            calls: phase.calls.map((call) => ({ ...call, value: BigInt(call.value) })),
            creates: phase.creates.map((create) => ({ ...create, address: create.address ?? undefined })),
          })),
          keccakInputs: raw.keccak,
          codeHashes: codeHashesOf(prestate, request),
        },
      };
    },
  };
}
