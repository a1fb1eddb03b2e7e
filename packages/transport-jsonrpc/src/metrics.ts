import {
  type Bundler,
  type ChainClient,
  type Clock,
  type MempoolStore,
  systemClock,
  type Timer,
  statusChangeKinds,
  userOperationStatuses,
} from "@bundlekit/core";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { Address } from "viem";

export interface JsonRpcMetricsOptions {
  /** The engine: its status events feed the operation and bundle counters; `relayers` name the balance series. */
  bundler: Pick<Bundler, "onStatusChange" | "relayers">;
  /**
   * Reads relayer balances in the background (every `refreshIntervalMs` and 250 ms after a mined
   * bundle, one read for the bundles mined meanwhile),
   * never during a scrape. Without it there is no balance series.
   */
  client?: Pick<ChainClient, "getBalance">;
  /** How often relayer balances are read from the node, in ms. Default 5000. */
  refreshIntervalMs?: number;
  /** The clock of the background reads. Default: the wall clock. */
  clock?: Clock;
  /** Pool sizes by status, read when scraped. Without it there is no pool series. */
  store?: Pick<MempoolStore, "countByStatus">;
  /** Registry the series join, e.g. the host application's. Default: a new one. */
  registry?: Registry;
  /** Also collect prom-client's default process metrics (CPU, memory, event loop). Default false. */
  processMetrics?: boolean;
}

/** Which transport a request came over. */
export type RpcTransportKind = "http" | "ws";

/** Prometheus series of one engine and its JSON-RPC transports. */
export interface JsonRpcMetrics {
  /** Holds every series; serve `registry.metrics()` or merge it into another registry. */
  readonly registry: Registry;
  /**
   * Count one JSON-RPC request. `method` must come from a bounded set (the transports pass the
   * method name when the method exists, else `unknown` or `invalid`); `code` is the error code,
   * undefined on success.
   */
  observeRequest(
    transport: RpcTransportKind,
    method: string,
    code: number | undefined,
    seconds: number,
  ): void;
  /** Open WebSocket connections. */
  readonly connections: Gauge;
  /** Live `eth_subscribe` subscriptions. */
  readonly subscriptions: Gauge;
  /** Stop following the engine's status events and reading balances. */
  close(): void;
}

/** How long after a mined bundle the relayer balances are read: the bundles mined meanwhile share the read. */
const afterBundleMs = 250;

/** Bundle transactions remembered to count each once while its operations' `submitted` events arrive. */
const recentBundles = 1024;

/** Whether `bundle` was among the recent ones in `seen`, which now holds it; an unnamed bundle never was. */
function remember(seen: Set<string>, bundle: string | undefined): boolean {
  if (bundle === undefined) return false;
  if (seen.has(bundle)) return true;
  seen.add(bundle);
  if (seen.size > recentBundles) seen.delete(seen.values().next().value!);
  return false;
}

/**
 * Create the metrics of an engine and its transports. Pool sizes come from the store when
 * scraped, so they are right however many engines share it; event counters count this engine's
 * own transitions (sum them across instances). Relayer balances come from the node, so they are
 * read in the background and a scrape serves the last values read: a node that hangs never holds
 * up a scrape. A relayer whose balance was never read has no sample.
 */
export function createJsonRpcMetrics(options: JsonRpcMetricsOptions): JsonRpcMetrics {
  const registry = options.registry ?? new Registry();
  const registers = [registry];
  const { bundler, client, store } = options;

  const requests = new Counter({
    name: "bundlekit_rpc_requests_total",
    help: "JSON-RPC requests by transport, method (unknown names collapse to `unknown`) and result code (`ok` on success)",
    labelNames: ["transport", "method", "code"] as const,
    registers,
  });
  const duration = new Histogram({
    name: "bundlekit_rpc_request_duration_seconds",
    help: "Time to answer one JSON-RPC request, by method",
    labelNames: ["method"] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  const statusChanges = new Counter({
    name: "bundlekit_user_operation_status_changes_total",
    help: "Status changes of user operations seen by this engine instance",
    labelNames: ["status"] as const,
    registers,
  });
  const bundles = new Counter({
    name: "bundlekit_bundles_submitted_total",
    help: "Bundle transactions this engine instance sent",
    registers,
  });
  const connections = new Gauge({
    name: "bundlekit_websocket_connections",
    help: "Open JSON-RPC WebSocket connections",
    registers,
  });
  const subscriptions = new Gauge({
    name: "bundlekit_subscriptions",
    help: "Live eth_subscribe subscriptions",
    registers,
  });
  for (const status of statusChangeKinds) statusChanges.inc({ status }, 0);
  bundles.inc(0);

  if (store) {
    const operations: Gauge<"status"> = new Gauge({
      name: "bundlekit_user_operations",
      help: "User operations in the store by status (the shared pool: take max, not sum, across instances)",
      labelNames: ["status"] as const,
      registers,
      async collect() {
        try {
          const counts = await store.countByStatus();
          for (const status of userOperationStatuses)
            operations.set({ status }, counts[status] ?? 0);
        } catch {
          operations.reset();
        }
      },
    });
  }
  const balances = client && relayerBalances(bundler.relayers, client, registers, options);
  if (options.processMetrics) collectDefaultMetrics({ register: registry });

  const seenBundles = new Set<string>();
  const stop = bundler.onStatusChange((change) => {
    statusChanges.inc({ status: change.status });
    // A mined bundle changed its relayer's balance: read once for the bundles mined meanwhile.
    if (change.status === "included" || change.status === "failed") balances?.refreshSoon();
    if (change.status === "submitted" && change.transactionHash && !remember(seenBundles, change.transactionHash)) bundles.inc();
  });

  return {
    registry,
    connections,
    subscriptions,
    observeRequest(transport, method, code, seconds) {
      requests.inc({ transport, method, code: code === undefined ? "ok" : String(code) });
      duration.observe({ method }, seconds);
    },
    close() {
      stop();
      balances?.close();
    },
  };
}

/**
 * The relayer balance gauges, read from the node now, every `refreshIntervalMs` and shortly
 * after `refreshSoon()`; one read at a time (a refresh asked for during a read follows it), so a hung node
 * never piles up calls. A balance that cannot be read keeps its last value; the refreshed-at
 * gauge says how old the values are (0 until every balance has been read once).
 */
function relayerBalances(
  relayers: readonly Address[],
  client: Pick<ChainClient, "getBalance">,
  registers: Registry[],
  options: Pick<JsonRpcMetricsOptions, "refreshIntervalMs" | "clock">,
) {
  const clock = options.clock ?? systemClock;
  const intervalMs = options.refreshIntervalMs ?? 5_000;
  const balances = new Gauge({
    name: "bundlekit_relayer_balance_wei",
    help: "Native balance of each relayer account, as last read from the node (in the background)",
    labelNames: ["relayer"] as const,
    registers,
  });
  const refreshed = new Gauge({
    name: "bundlekit_relayer_balances_refreshed_timestamp_seconds",
    help: "When every relayer balance was last read from the node (Unix time; 0 before the first read)",
    registers,
  });
  let reading: Promise<void> | undefined;
  let again = false;
  let timer: Timer | undefined;
  const read = async () => {
    const results = await Promise.allSettled(
      relayers.map(async (relayer) =>
        balances.set({ relayer }, Number(await client.getBalance({ address: relayer }))),
      ),
    );
    if (results.every((result) => result.status === "fulfilled")) refreshed.set(clock.now() / 1000);
  };
  const refresh = () => {
    if (reading) {
      again = true;
      return;
    }
    reading = read().finally(() => {
      reading = undefined;
      if (again) {
        again = false;
        refresh();
      }
    });
  };
  const tick = () => {
    refresh();
    timer = clock.setTimeout(tick, intervalMs);
  };
  tick();
  let soon: Timer | undefined;
  /** A read `afterBundleMs` from now, one for every bundle mined meanwhile and each of its operations. */
  const refreshSoon = () => {
    soon ??= clock.setTimeout(() => {
      soon = undefined;
      refresh();
    }, afterBundleMs);
  };
  return {
    refreshSoon,
    close: () => {
      timer?.cancel();
      soon?.cancel();
    },
  };
}
