import type { Address } from "viem";
import type { ChainClient } from "../ports/chain-client.ts";
import type { Simulator } from "../ports/simulator.ts";
import type { ValidationTracer } from "../ports/validation-tracer.ts";
import { attributeV06, decodeValidationResult, simulateValidation, validationCall } from "./simulate.ts";

/** The caller of traced simulations, as `eth_call` without `from`. */
const simulationCaller: Address = "0x0000000000000000000000000000000000000000";
/** Gas of a traced simulation: ample for any validation the bundler accepts. */
const simulationGas = 30_000_000n;

/** Unsafe mode: `simulateValidation` through `eth_call`, no trace, no ERC-7562 rules. For nodes without tracing. */
export function createUnsafeSimulator(client: ChainClient): Simulator {
  return {
    mode: "unsafe",
    tracer: undefined,
    async simulateValidation(entryPoint, op, options = {}) {
      return { validation: await simulateValidation(client, entryPoint, op, options), trace: undefined };
    },
    async close() {},
  };
}

/** Safe mode: the validation traced through `tracer`, so the engine can check the ERC-7562 rules on it. */
export function createTracingSimulator(tracer: ValidationTracer, client: ChainClient): Simulator {
  return {
    mode: "safe",
    tracer: tracer.name,
    async simulateValidation(entryPoint, op, options = {}) {
      const call = validationCall(entryPoint, op, options.stateOverride);
      const { result, trace } = await tracer.trace({
        call: { from: simulationCaller, to: call.to, data: call.data, gas: simulationGas },
        stateOverride: call.stateOverride,
        entryPoint: entryPoint.address,
      });
      const validation = await attributeV06(client, entryPoint, op, decodeValidationResult(entryPoint, op, result), options.stateOverride);
      return { validation, trace };
    },
    close: async () => {
      await tracer.close?.();
    },
  };
}

