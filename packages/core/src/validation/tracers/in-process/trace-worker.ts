import { parentPort } from "node:worker_threads";
import { runTracedCall, type TracedCallInput } from "./run-traced-call.ts";

/** A worker thread of the in-process tracer: runs one traced call per message. */
parentPort?.on("message", async ({ id, input }: { id: number; input: TracedCallInput }) => {
  try {
    parentPort!.postMessage({ id, output: await runTracedCall(input) });
  } catch (error) {
    parentPort!.postMessage({ id, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
  }
});
