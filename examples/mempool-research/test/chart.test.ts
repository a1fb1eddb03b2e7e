import { Resvg } from "@resvg/resvg-js";
import { describe, expect, it } from "vitest";
import { renderChart, renderPng } from "../src/chart.ts";
import { runExperiment } from "../src/experiment.ts";
import { builtInPolicy } from "../src/policies.ts";
import { generateWorkload } from "../src/workload.ts";

/** How many pixels of `rgba` have exactly the colour `hex`. */
function pixelsOf(rgba: Buffer, hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));
  let count = 0;
  for (let i = 0; i < rgba.length; i += 4)
    if (rgba[i] === r && rgba[i + 1] === g && rgba[i + 2] === b) count++;
  return count;
}

describe("the report's chart", () => {
  it("renders to a PNG: the workload and seeds in the title, each policy in its own colour in every panel, a panel per measure", async () => {
    const report = await runExperiment({
      policies: [builtInPolicy("default"), builtInPolicy("fifo"), builtInPolicy("fair")],
      workloads: [1, 2].map((seed) => ({
        seed,
        workload: generateWorkload({ ops: 120, seed, rate: 60, failureRate: 0.05 }),
      })),
      description: "steady: a small workload",
      replay: { blockGasLimit: 3_000_000n },
      bootstrap: 100,
    });
    const svg = await renderChart(report);
    expect(svg).toContain(">steady: a small workload<");
    expect(svg).toContain(
      "seeds 1–2; baseline default. Dots: medians over the workloads; bars: their 95% intervals (bootstrap).",
    );
    for (const title of [
      "Latency: share of included operations within x seconds",
      "Latency p95 (s)",
      "Net revenue vs default (%)",
      "Net revenue per gas vs default (%)",
      "Fairness: Jain's index of senders' mean latency",
      "Refused and dropped, by reason",
    ]) {
      expect(svg).toContain(title);
    }
    expect(svg).toContain("dropped: AA23 reverted");
    // The policies in the report's order, each in its colour in every mark that stands for it.
    const names = ["default", "fifo", "fair"];
    expect(svg).toContain(
      `legend titled 'policy' for fill color and stroke color with 3 values: ${names.join(", ")}`,
    );
    for (const [i, name] of names.entries()) {
      const colours = [
        ...svg.matchAll(
          new RegExp(`aria-label="[^"]*policy: ${name}"[^>]*(?:fill|stroke)="(#[0-9a-f]{6})"`, "g"),
        ),
      ].map((m) => m[1]);
      expect(colours.length).toBeGreaterThanOrEqual(7);
      expect(new Set(colours)).toEqual(new Set([["#4c78a8", "#f58518", "#54a24b"][i]]));
    }

    const png = renderPng(svg);
    expect(png.subarray(1, 4).toString()).toBe("PNG");
    const width = png.readUInt32BE(16);
    expect(width).toBe(2 * Number(/<svg[^>]* width="(\d+)"/.exec(svg)![1]));
    // Every policy's colour is drawn, in more than one panel's worth of pixels; the same colours in the same order as the report.
    const pixels = new Resvg(svg, { font: { loadSystemFonts: false } }).render().pixels;
    for (const colour of ["#4c78a8", "#f58518", "#54a24b"])
      expect(pixelsOf(pixels, colour)).toBeGreaterThan(500);
    expect(pixelsOf(pixels, "#e45756")).toBe(0);
  });
});
