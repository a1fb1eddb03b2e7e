import { Resvg } from "@resvg/resvg-js";
import { parse, View } from "vega";
import { compile, type TopLevelSpec } from "vega-lite";
import type { Field } from "vega-lite/types_unstable/channeldef.js";
import type { LayerSpec } from "vega-lite/types_unstable/spec/index.js";
import type { ExperimentReport } from "./experiment.ts";
import type { Interval, Metric } from "./statistics.ts";

/** One colour per policy, in the report's order, the same in every panel (Tableau 10). */
const palette = [
  "#4c78a8",
  "#f58518",
  "#54a24b",
  "#e45756",
  "#72b7b2",
  "#b279a2",
  "#eeca3b",
  "#9d755d",
  "#ff9da6",
  "#bab0ac",
];

/** The most reasons of refusal or drop the chart shows; report.json has them all. */
const maxReasons = 8;

/** The font the chart names, found on most systems and used for the PNG. */
const font = "DejaVu Sans, Helvetica, Arial, sans-serif";

/** A dashed vertical line at `x`. */
function referenceLine(x: number): LayerSpec<Field>["layer"][number] {
  return {
    mark: { type: "rule", color: "#888", strokeDash: [4, 3] },
    encoding: { x: { datum: x } },
  };
}

/** `text` cut into lines of at most `width` characters, at spaces. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + word.length + 1 > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return line ? [...lines, line] : lines;
}

/**
 * The comparison as a chart (SVG): the latency distribution (CDF, seconds) and its p50 and p95,
 * net revenue and revenue per gas relative to the baseline, fairness, and refusals and drops by
 * reason, each with its 95% interval; the policies in the report's order and colours in every
 * panel, the workload and seeds in the title.
 */
export async function renderChart(report: ExperimentReport): Promise<string> {
  const names = report.policies.map((p) => p.name);
  const color = {
    field: "policy",
    type: "nominal",
    scale: { domain: names, range: names.map((_, i) => palette[i % palette.length]!) },
    legend: { title: "policy", orient: "top", direction: "horizontal" },
  } as const;
  const policyAxis = { field: "policy", type: "nominal", sort: names, title: null } as const;
  const row = (policy: string, { median, low, high }: Interval) => ({ policy, median, low, high });
  const none: Interval = { median: 0, low: 0, high: 0 };

  /** A dot per policy at the median, a bar across its 95% interval; a dashed line at `reference`. */
  const dots = (
    values: ReturnType<typeof row>[],
    title: string,
    axisTitle: string,
    reference?: number,
  ): LayerSpec<Field> => {
    const ends = values.flatMap((v) => [v.low, v.high, v.median]).filter((v) => Number.isFinite(v));
    if (reference !== undefined) ends.push(reference);
    const [min, max] = [Math.min(...ends), Math.max(...ends)];
    const pad = (max - min) * 0.08 || Math.abs(max) * 0.05 || 1;
    return {
      title,
      width: 240,
      height: 26 * names.length,
      data: { values },
      layer: [
        ...(reference === undefined ? [] : [referenceLine(reference)]),
        {
          mark: { type: "rule", strokeWidth: 2.5 },
          encoding: {
            y: policyAxis,
            x: {
              field: "low",
              type: "quantitative",
              title: axisTitle,
              scale: { domain: [min - pad, max + pad], nice: false },
            },
            x2: { field: "high" },
            color,
          },
        },
        {
          mark: { type: "point", filled: true, size: 80, opacity: 1 },
          encoding: { y: policyAxis, x: { field: "median", type: "quantitative" }, color },
        },
      ],
    };
  };

  const cdf = report.policies.flatMap((p) =>
    p.latencyPercentilesSeconds.map((seconds, q) => ({ policy: p.name, seconds, share: q / 100 })),
  );
  // The reasons that occurred, the most frequent first, at most `maxReasons` of them.
  const largest = (m: Metric) =>
    Math.max(...report.policies.map((p) => Math.max(...p.metrics[m.key]!.perSeed)));
  const occurred = report.metrics
    .filter((m) => !m.headline && largest(m) > 0)
    .sort((a, b) => largest(b) - largest(a));
  const reasons = occurred
    .slice(0, maxReasons)
    .flatMap((m) =>
      report.policies.map((p) => ({ reason: m.label, ...row(p.name, p.metrics[m.key]!) })),
    );
  const versus = (key: string) =>
    report.policies.map((p) => row(p.name, p.versusBaseline?.[key] ?? none));
  const of = (key: string) => report.policies.map((p) => row(p.name, p.metrics[key]!));

  const spec: TopLevelSpec = {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: {
      text: wrap(report.workload.description, 110),
      subtitle: `${report.title.slice(report.workload.description.length + 2)}. Dots: medians over the workloads; bars: their 95% intervals (bootstrap).`,
      anchor: "start",
      fontSize: 15,
      subtitleFontSize: 12,
      offset: 12,
    },
    config: {
      font,
      view: { stroke: "#ddd" },
      axis: { labelFontSize: 11, titleFontSize: 11 },
      title: { fontSize: 12, anchor: "start" },
      legend: { labelFontSize: 12, symbolStrokeWidth: 3 },
    },
    background: "white",
    padding: 16,
    spacing: 28,
    vconcat: [
      {
        hconcat: [
          {
            title: "Latency: share of included operations within x seconds",
            width: 340,
            height: 26 * names.length + 40,
            data: { values: cdf },
            mark: { type: "line", interpolate: "step-after", strokeWidth: 2 },
            encoding: {
              x: {
                field: "seconds",
                type: "quantitative",
                title: "seconds from arrival to inclusion (all workloads)",
              },
              y: { field: "share", type: "quantitative", title: null, axis: { format: "%" } },
              color,
            },
          },
          dots(of("latencyP50Seconds"), "Latency p50 (s)", "seconds"),
          dots(of("latencyP95Seconds"), "Latency p95 (s)", "seconds"),
        ],
      },
      {
        hconcat: [
          dots(
            versus("revenueGwei"),
            `Net revenue vs ${report.baseline} (%)`,
            `change from ${report.baseline}, %`,
            0,
          ),
          dots(
            versus("revenuePerGasGwei"),
            `Net revenue per gas vs ${report.baseline} (%)`,
            `change from ${report.baseline}, %`,
            0,
          ),
          dots(
            of("fairness"),
            "Fairness: Jain's index of senders' mean latency",
            "1 = every sender waits alike",
          ),
        ],
      },
      reasons.length > 0
        ? {
            title: `Refused and dropped, by reason: operations per workload (median, 95% interval)${occurred.length > maxReasons ? `; the ${maxReasons} most frequent of ${occurred.length} reasons` : ""}`,
            data: { values: reasons },
            facet: {
              row: {
                field: "reason",
                type: "nominal",
                sort: occurred.slice(0, maxReasons).map((m) => m.label),
                title: null,
                header: {
                  labelAngle: 0,
                  labelOrient: "top",
                  labelAnchor: "start",
                  labelAlign: "left",
                  labelFontSize: 11,
                  labelLimit: 900,
                },
              },
            },
            spec: {
              width: 420,
              height: 16 * names.length,
              layer: [
                {
                  mark: { type: "bar" },
                  encoding: {
                    y: policyAxis,
                    x: { field: "median", type: "quantitative", title: "operations" },
                    color,
                  },
                },
                {
                  mark: { type: "rule", color: "#222" },
                  encoding: {
                    y: policyAxis,
                    x: { field: "low", type: "quantitative" },
                    x2: { field: "high" },
                  },
                },
              ],
            },
          }
        : {
            title: "Refused and dropped, by reason",
            width: 420,
            height: 30,
            data: { values: [{}] },
            mark: { type: "text", text: "none refused or dropped" },
          },
    ],
  };
  const view = new View(parse(compile(spec).spec), { renderer: "none" });
  return view.toSVG();
}

/** The chart as a PNG, twice its SVG size, with the system's fonts (DejaVu Sans where present). */
export function renderPng(svg: string): Buffer {
  const image = new Resvg(svg, {
    font: {
      loadSystemFonts: true,
      defaultFontFamily: "DejaVu Sans",
      sansSerifFamily: "DejaVu Sans",
    },
    fitTo: { mode: "zoom", value: 2 },
  });
  return image.render().asPng();
}
