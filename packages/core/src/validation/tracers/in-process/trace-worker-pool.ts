import { Worker } from "node:worker_threads";
import { InfrastructureError } from "../../../errors/errors.ts";
import type { TracedCallInput, TracedCallOutput } from "./run-traced-call.ts";

/** Worker threads running traced calls, each to the least busy worker. */
export interface TraceWorkerPool {
  /** Start the workers now, so the first validation does not wait for them to load. */
  start(): void;
  run(input: TracedCallInput): Promise<TracedCallOutput>;
  /** Terminate every worker; runs still going are rejected. */
  close(): Promise<void>;
}

interface PendingRun {
  resolve(output: TracedCallOutput): void;
  reject(error: Error): void;
}

// The worker's file has this module's extension: `.ts` when run from source, `.js` once built.
const WORKER_FILE = new URL(`./trace-worker${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url);

interface PooledWorker {
  worker: Worker;
  pending: Map<number, PendingRun>;
}

/**
 * A pool of `size` workers, started by `start` or the first run. They do not keep the process
 * alive on their own; `close` ends them (a later run starts them again).
 */
export function createTraceWorkerPool(size: number): TraceWorkerPool {
  let nextId = 0;
  let closed = false;
  const workers: PooledWorker[] = [];

  function start(): PooledWorker {
    const pooled: PooledWorker = { worker: new Worker(WORKER_FILE), pending: new Map() };
    pooled.worker.unref();
    pooled.worker.on("message", (message: { id: number; output?: TracedCallOutput; error?: string }) => {
      const run = pooled.pending.get(message.id);
      if (!run) return;
      pooled.pending.delete(message.id);
      if (message.error !== undefined) run.reject(new InfrastructureError(`in-process tracer failed: ${message.error}`));
      else run.resolve(message.output!);
    });
    const fail = (error: Error) => {
      for (const run of pooled.pending.values()) run.reject(new InfrastructureError(`in-process tracer worker stopped: ${error.message}`));
      pooled.pending.clear();
      const index = workers.indexOf(pooled);
      if (index >= 0 && !closed) workers[index] = start();
    };
    pooled.worker.on("error", fail);
    pooled.worker.on("exit", (code) => {
      if (!closed) fail(new Error(`exit code ${code}`));
    });
    return pooled;
  }

  function fill() {
    closed = false;
    while (workers.length < size) workers.push(start());
  }

  return {
    start: fill,
    run(input) {
      fill();
      const pooled = workers.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pooled.pending.set(id, { resolve, reject });
        pooled.worker.postMessage({ id, input });
      });
    },
    async close() {
      closed = true;
      await Promise.all(
        workers.splice(0).map(async ({ worker, pending }) => {
          for (const run of pending.values()) run.reject(new InfrastructureError("the in-process tracer was closed"));
          pending.clear();
          await worker.terminate();
        }),
      );
    },
  };
}
