import { type Common, createCustomCommon, Hardfork, Mainnet } from "@ethereumjs/common";
import { createEVM, type EVM, getActivePrecompiles, paramsEVM } from "@ethereumjs/evm";
import { createAddressFromString, hexToBytes, bytesToHex } from "@ethereumjs/util";
import type { TraceCallRequest, TracedValidation } from "../../../ports/validation-tracer.ts";
import type { Hex } from "viem";
import { type BlockEnvironment, codeHashesOf, type Prestate } from "../prestate.ts";
import { Erc7562Collector } from "./erc7562-collector.ts";
import { lazyKzg } from "./lazy-kzg.ts";
import { nativeEcrecover } from "./native-ecrecover.ts";
import { StrictStateManager } from "./strict-state-manager.ts";

/** Everything a run needs; plain data, so it crosses to a worker thread. */
export interface TracedCallInput {
  request: TraceCallRequest;
  prestate: Prestate;
  block: BlockEnvironment;
  chainId: number;
  /** Run the P256VERIFY precompile at 0x100 (EIP-7951 / RIP-7212), as chains that have it do. */
  p256Precompile: boolean;
}

/** A run's outcome; `missing` lists reads the prestate did not cover (the result must not be trusted then). */
export interface TracedCallOutput extends TracedValidation {
  missing: string[];
}

interface Engine {
  evm: EVM;
  collector: Erc7562Collector;
  common: Common;
  /** The run in progress: one EVM runs one call at a time (its state and collector are swapped per run). */
  busy: Promise<unknown>;
}

const engines = new Map<string, Promise<Engine>>();

/** One EVM per chain, EntryPoint and precompile set, reused across runs (state is swapped in per run). */
function engineFor(input: TracedCallInput): Promise<Engine> {
  const key = `${input.chainId}/${input.request.entryPoint.toLowerCase()}/${input.p256Precompile}`;
  let engine = engines.get(key);
  if (!engine) {
    engine = (async () => {
      const common = createCustomCommon({ chainId: input.chainId }, Mainnet, {
        hardfork: Hardfork.Prague,
        eips: input.p256Precompile ? [7951] : [],
        customCrypto: { ecrecover: nativeEcrecover, kzg: lazyKzg() },
      });
      common.updateParams(paramsEVM);
      const collector = new Erc7562Collector(input.request.entryPoint);
      const evm = await createEVM({ common, customOpcodes: collector.customOpcodes(common) });
      collector.attach(evm);
      return { evm, collector, common, busy: Promise.resolve() };
    })();
    engines.set(key, engine);
  }
  return engine;
}

/**
 * Re-execute a validation call in `@ethereumjs/evm` on the node's prestate, collecting its
 * ERC-7562 trace. Matches the node's `eth_call`: the frame gets the call's gas less intrinsic gas,
 * the caller, target, coinbase and precompiles start warm, and the block is the node's latest.
 */
export async function runTracedCall(input: TracedCallInput): Promise<TracedCallOutput> {
  const engine = await engineFor(input);
  const run = engine.busy.then(() => runOn(engine, input));
  engine.busy = run.catch(() => {});
  return run;
}

async function runOn({ evm, collector, common }: Engine, input: TracedCallInput): Promise<TracedCallOutput> {
  const { call } = input.request;
  const state = await StrictStateManager.fromPrestate(input.prestate);
  evm.stateManager = state;
  // The journal keeps its own reference to the state and has no setter for it.
  Object.assign(evm.journal, { stateManager: state });
  evm.journal.cleanJournal();
  evm.transientStorage.clear();
  const coinbase = createAddressFromString(input.block.coinbase);
  for (const warm of [call.from, call.to, input.block.coinbase]) evm.journal.addAlwaysWarmAddress(warm.toLowerCase());
  for (const precompile of getActivePrecompiles(common).keys()) evm.journal.addAlwaysWarmAddress(precompile);
  collector.reset(input.prestate);

  const data = hexToBytes(call.data);
  const result = await evm.runCall({
    caller: createAddressFromString(call.from),
    origin: createAddressFromString(call.from),
    to: createAddressFromString(call.to),
    data,
    gasLimit: call.gas - intrinsicGas(data),
    block: {
      header: {
        number: input.block.number,
        coinbase,
        timestamp: input.block.timestamp,
        difficulty: 0n,
        prevRandao: hexToBytes(input.block.prevRandao),
        gasLimit: input.block.gasLimit,
        baseFeePerGas: input.block.baseFeePerGas,
        getBlobGasPrice: () => 1n,
      },
    },
  });
  const output = bytesToHex(result.execResult.returnValue) as Hex;
  const error = result.execResult.exceptionError;
  return {
    result: error ? { reverted: true, data: output, message: error.error } : { reverted: false, data: output },
    trace: {
      phases: [...collector.phases],
      keccakInputs: [...collector.keccakInputs],
      codeHashes: codeHashesOf(input.prestate, input.request),
    },
    missing: [...state.missing],
  };
}

/** 21000 plus 4 per zero and 16 per non-zero calldata byte: what a transaction pays before its frame starts. */
function intrinsicGas(data: Uint8Array): bigint {
  let gas = 21_000n;
  for (const byte of data) gas += byte === 0 ? 4n : 16n;
  return gas;
}
