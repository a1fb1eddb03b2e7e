/**
 * A counting JSON-RPC proxy in front of the node: the service talks to it instead of anvil, so
 * the benchmark counts the node requests the service makes, by phase and method, without
 * changing the service. It runs in a worker thread, so the load generator's own work (signing,
 * watching receipts) never delays the service's node requests. Batches are counted request by
 * request.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import type { Address } from "viem";
import { nodeRequestPhase } from "./node-request-phase.ts";

/** Counts (or milliseconds) by phase, then by request key (method, with the call's selector for calls). */
export type NodeRequestCounts = Record<string, Record<string, number>>;

/** What the proxy saw: requests counted, and the node's answering time in ms, by phase and key. */
export interface NodeRequestTally {
  counts: NodeRequestCounts;
  /** Wall time from forwarding a request (or batch) to its answer, shared evenly within a batch. */
  milliseconds: NodeRequestCounts;
  /** HTTP requests to the node: a JSON-RPC batch counts once. */
  httpRequests: number;
}

export interface NodeRequestCounter {
  /** The proxy's URL, to give the service as its RPC URL. */
  url: string;
  /** What was seen since the last `reset`. */
  tally(): Promise<NodeRequestTally>;
  reset(): Promise<void>;
  stop(): Promise<void>;
}

interface Options {
  /** The node's URL. */
  target: string;
  /** The service's relayers, whose balance reads belong to bundling. */
  relayers: readonly Address[];
}

type Message = { id: number; kind: "tally" | "reset" };

/** Starts the proxy (in a worker thread) on a free port of 127.0.0.1, forwarding to `target`. */
export async function startNodeRequestCounter(options: Options): Promise<NodeRequestCounter> {
  const worker = new Worker(new URL(import.meta.url), { workerData: options });
  const pending = new Map<number, (value: unknown) => void>();
  let nextId = 0;
  const url = await new Promise<string>((resolve, reject) => {
    worker.once("error", reject);
    worker.once("message", (message: { url: string }) => resolve(message.url));
  });
  worker.on("message", (message: { id: number; value: unknown }) => {
    pending.get(message.id)?.(message.value);
    pending.delete(message.id);
  });
  const ask = <T>(kind: Message["kind"]) =>
    new Promise<T>((resolve) => {
      const id = nextId++;
      pending.set(id, resolve as (value: unknown) => void);
      worker.postMessage({ id, kind } satisfies Message);
    });
  return {
    url,
    tally: () => ask<NodeRequestTally>("tally"),
    reset: () => ask<void>("reset"),
    stop: async () => {
      await worker.terminate();
    },
  };
}

/** The method, and for calls the 4-byte selector of the called function. */
export function requestKey(request: JsonRpcRequest): string {
  const method = request.method ?? "(none)";
  const call = request.params?.[0] as { data?: string; input?: string } | undefined;
  const data = typeof call === "object" && call ? (call.data ?? call.input) : undefined;
  return typeof data === "string" && data.length >= 10 ? `${method} ${data.slice(0, 10)}` : method;
}

interface JsonRpcRequest {
  method?: string;
  params?: unknown[];
}

/** The worker: the proxy itself. */
async function serve({ target, relayers }: Options) {
  const classify = nodeRequestPhase(relayers);
  let tally: NodeRequestTally = { counts: {}, milliseconds: {}, httpRequests: 0 };
  const add = (into: NodeRequestCounts, phase: string, key: string, value: number) => {
    into[phase] = { ...into[phase], [key]: (into[phase]?.[key] ?? 0) + value };
  };
  const server = createServer(async (req, res) => {
    try {
      const body = await readBody(req);
      let requests: JsonRpcRequest[] = [];
      try {
        const parsed = JSON.parse(body) as JsonRpcRequest | JsonRpcRequest[];
        requests = Array.isArray(parsed) ? parsed : [parsed];
      } catch {
        // Not JSON: forwarded as is, the node answers it.
      }
      const keys = requests.map((request) => [classify(request), requestKey(request)] as const);
      for (const [phase, key] of keys) add(tally.counts, phase, key, 1);
      tally.httpRequests += 1;
      const started = performance.now();
      const answer = await fetch(target, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      const answerBody = Buffer.from(await answer.arrayBuffer());
      const share = (performance.now() - started) / Math.max(1, keys.length);
      for (const [phase, key] of keys) add(tally.milliseconds, phase, key, share);
      res.writeHead(answer.status, { "content-type": "application/json" });
      res.end(answerBody);
    } catch (error) {
      res.writeHead(502).end(String(error));
    }
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  parentPort!.on("message", ({ id, kind }: Message) => {
    if (kind === "reset") tally = { counts: {}, milliseconds: {}, httpRequests: 0 };
    parentPort!.postMessage({ id, value: kind === "tally" ? tally : undefined });
  });
  parentPort!.postMessage({ url: `http://127.0.0.1:${port}` });
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

if (!isMainThread && (workerData as Options | undefined)?.target) await serve(workerData as Options);
