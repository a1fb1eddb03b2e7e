/**
 * keccak256 per implementation and input size: CPU nanoseconds a hash (median of the runs), for the
 * sizes an engine hashes (a checksummed address's 40 characters, 64- and 96-byte words, an
 * operation's 256-byte packed fields, the EIP-712 struct, calldata, a bundle's 30 KB transaction).
 * Compared: the `keccak` package's native binding (`initialize`, `absorb`, `squeeze`: a new
 * 32-byte buffer per hash), viem's keccak256 (noble, JavaScript), and the engine's WebAssembly
 * keccak (`utils/keccak.ts`) returning a new array or writing into a given one. See
 * bench/README.md ("keccak") and bench/results/research-replay.md.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { keccak256 as viemKeccak256 } from "viem";
import { keccak256Bytes, keccak256Into } from "../packages/core/src/utils/keccak.ts";
import { exitWithUsageOnHelp, integerFlag, log, runScript } from "./script.ts";
import { medianOf } from "./stats.ts";

const usage = `usage: pnpm bench:keccak [--runs R] [--hashes N]

  --runs R    runs per implementation and size; the median is reported (default 7)
  --hashes N  bytes hashed per run, hashes per run for inputs up to 136 bytes, proportionally fewer of larger ones (default 200000)`;

const sizes = [40, 64, 96, 256, 288, 1000, 30_000];

/** The `keccak` package's binding (a devDependency of the benchmarks), as the engine called it before: three calls and a new buffer a hash. */
function nativeKeccak(): ((data: Uint8Array) => Uint8Array) | undefined {
  try {
    const require = createRequire(import.meta.url);
    const directory = dirname(require.resolve("keccak/package.json"));
    const State = createRequire(join(directory, "package.json"))("node-gyp-build")(directory) as new () => {
      initialize(rate: number, capacity: number): void;
      absorb(data: Buffer): void;
      squeeze(length: number): Buffer;
    };
    const state = new State();
    return (data) => {
      state.initialize(1088, 512);
      state.absorb(data as Buffer);
      return state.squeeze(32);
    };
  } catch {
    return undefined;
  }
}

/**
 * CPU nanoseconds a hash of `data`, its first byte changed before each: the engine's keccak
 * remembers the last few large inputs, and a figure is of hashing, not of finding one remembered.
 */
function cpuNanosecondsPerHash(hash: (data: Buffer) => unknown, data: Buffer, count: number): number {
  for (let i = 0; i < Math.min(count, 2000); i++) {
    data[0] = i;
    hash(data);
  }
  const start = process.cpuUsage();
  for (let i = 0; i < count; i++) {
    data[0] = i;
    hash(data);
  }
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / count;
}

async function main() {
  const { values } = parseArgs({
    options: {
      runs: { type: "string", default: "7" },
      hashes: { type: "string", default: "200000" },
      help: { type: "boolean", default: false },
    },
  });
  exitWithUsageOnHelp(values.help, usage);
  const runs = integerFlag("runs", values.runs, 1);
  const hashes = integerFlag("hashes", values.hashes, 1);
  const target = new Uint8Array(32);
  const native = nativeKeccak();
  const implementations: [string, (data: Buffer) => unknown][] = [
    ...(native ? [["native binding (keccak 3.0.4)", native] as [string, (data: Buffer) => unknown]] : []),
    ["viem keccak256 (noble)", (data) => viemKeccak256(data, "bytes")],
    ["WebAssembly, new array", keccak256Bytes],
    ["WebAssembly, into a buffer", (data) => keccak256Into(data, target, 0)],
  ];
  if (!native) log("the keccak package's native binding is not installed: left out");
  process.stdout.write(`| implementation | ${sizes.map((s) => `${s.toLocaleString("en")} B`).join(" | ")} |\n`);
  process.stdout.write(`| --- |${sizes.map(() => " ---: |").join("")}\n`);
  for (const [name, hash] of implementations) {
    const cells = sizes.map((size) => {
      const data = Buffer.from(Uint8Array.from({ length: size }, (_, i) => (i * 31 + size) & 0xff));
      // Fewer hashes of large inputs: about the same time per run at every size.
      const count = Math.max(200, Math.floor(hashes / Math.max(1, size / 136)));
      const figures = Array.from({ length: runs }, () => cpuNanosecondsPerHash(hash, data, count));
      const median = medianOf(figures);
      if (median >= 1e6) return `${(median / 1e6).toFixed(2)} ms`;
      return median >= 10_000 ? `${(median / 1000).toFixed(1)} µs` : `${Math.round(median)} ns`;
    });
    process.stdout.write(`| ${name} | ${cells.join(" | ")} |\n`);
  }
}

runScript("bench:keccak", usage, main);
