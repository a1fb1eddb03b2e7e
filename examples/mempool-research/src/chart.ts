import { parse, View } from "vega";
import { compile } from "vega-lite";
import type { PolicyReport } from "./replay.ts";

/** An SVG comparing the policies: inclusion latency (p50, p95, p99 in blocks) and net revenue, side by side. */
export async function renderChart(reports: readonly PolicyReport[]): Promise<string> {
  const latency = reports.flatMap((r) =>
    (["p50", "p95", "p99"] as const).map((quantile) => ({ policy: r.policy, quantile, blocks: r.latencyBlocks[quantile] })),
  );
  const revenue = reports.map((r) => ({ policy: r.policy, gwei: Number(BigInt(r.revenue.net) / 1_000_000_000n) }));
  const spec = {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    hconcat: [
      {
        title: "Inclusion latency (blocks)",
        data: { values: latency },
        mark: "bar",
        encoding: {
          x: { field: "policy", type: "nominal", title: null },
          xOffset: { field: "quantile" },
          y: { field: "blocks", type: "quantitative" },
          color: { field: "quantile", type: "nominal" },
        },
        width: 260,
        height: 220,
      },
      {
        title: "Net revenue (gwei)",
        data: { values: revenue },
        mark: "bar",
        encoding: { x: { field: "policy", type: "nominal", title: null }, y: { field: "gwei", type: "quantitative" } },
        width: 180,
        height: 220,
      },
    ],
  };
  const view = new View(parse(compile(spec as never).spec), { renderer: "none" });
  return view.toSVG();
}
