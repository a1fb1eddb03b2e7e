/**
 * `pnpm check:consumer`, after `pnpm build`: what a team outside this repository gets from npm.
 * Packs every library package, installs the tarballs with npm into a scratch project in the
 * system's temporary directory (outside the workspace, so nothing resolves to it), and there:
 * - runs a plain ESM JavaScript app (`scripts/consumer/app.mjs`) on Node 24 and on Node 22, with
 *   no flags: it embeds the engine with SQLite, mounts it in Express, and sends a user operation
 *   with viem's bundler client to inclusion on the devnet;
 * - runs the command `bundlekit-server` from `node_modules/.bin` (`scripts/consumer/bin.mjs`) on
 *   Node 24 and Node 22: `--help`, then the service on its embedded devnet answering
 *   `eth_supportedEntryPoints` over HTTP, stopped by SIGINT; and `startServiceProcess` from code;
 * - type-checks those scripts and a TypeScript consumer (`scripts/consumer/consumer.ts`, which uses
 *   every package) with strict, exactOptionalPropertyTypes, moduleResolution nodenext and
 *   skipLibCheck off.
 * Prints the install size and the type-check time. Node 22 is fetched from the npm registry into
 * the toolchain cache once (`BUNDLEKIT_TOOLS_DIR`, as `./bundlekit` does).
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { libraryDirectories, packLibrary, root } from "./pack-libraries.ts";

/** What the scratch project installs beside the tarballs (the peer dependencies among them), at the workspace's own versions. */
const companions = [
  "effect@4.1.0",
  "vitest@5.1.1",
  "express@5.3.0",
  "@types/express@5.0.6",
  "viem@2.57.20",
  "typescript@5.9.3",
  "@types/node@24.19.2",
];

function step(title: string) {
  console.log(`--- ${title}`);
}

/** Runs a command with its output shown; exits the check when it fails. */
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env) {
  const result = spawnSync(command, args, { cwd, env, stdio: "inherit" });
  if (result.status !== 0) {
    console.error(
      `consumer check failed: ${command} ${args.join(" ")} exited with ${result.status ?? result.signal}`,
    );
    process.exit(1);
  }
}

/** A Node 22 binary, fetched from the npm registry (the `node` package) into the toolchain cache once. */
function node22(): string {
  const tools =
    process.env.BUNDLEKIT_TOOLS_DIR ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "bundlekit-toolchain");
  const prefix = join(tools, "node22");
  const binary = join(prefix, "node_modules", "node", "bin", "node");
  if (!existsSync(binary)) {
    mkdirSync(prefix, { recursive: true });
    run(
      "npm",
      ["install", "--prefix", prefix, "--no-audit", "--no-fund", "--loglevel=error", "node@22"],
      root,
    );
  }
  return binary;
}

const scratch = mkdtempSync(join(tmpdir(), "bundlekit-consumer-"));
try {
  step("pack every library package");
  const tarballs = libraryDirectories().map((dir) => {
    const tarball = packLibrary(dir, scratch);
    if (tarball === undefined) throw new Error(`pnpm pack failed in ${dir}`);
    return tarball;
  });

  step("npm install the tarballs into a project outside the workspace");
  const project = join(scratch, "app");
  mkdirSync(project);
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({ name: "consumer", private: true, type: "module" }, null, 2),
  );
  for (const file of ["app.mjs", "bin.mjs", "consumer.ts", "tsconfig.json"])
    copyFileSync(join(root, "scripts", "consumer", file), join(project, file));
  run(
    "npm",
    ["install", "--no-audit", "--no-fund", "--loglevel=error", ...tarballs, ...companions],
    project,
  );
  const size = execFileSync("du", ["-sh", "node_modules"], {
    cwd: project,
    encoding: "utf8",
  }).split("\t")[0];
  console.log(`installed: node_modules ${size}`);

  step("type-check: strict, exactOptionalPropertyTypes, nodenext, skipLibCheck off");
  const started = performance.now();
  run(
    process.execPath,
    [join(project, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"],
    project,
  );
  console.log(`type-checked in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  for (const [name, node] of [
    ["Node 24", process.execPath],
    ["Node 22", node22()],
  ] as const) {
    step(
      `${name}: the plain JavaScript app embeds the engine, mounts it in Express, and sends a user operation to inclusion`,
    );
    run(node, ["--version"], project);
    run(node, ["app.mjs"], project);
    step(
      `${name}: the command bundlekit-server answers --help, serves on its embedded devnet, and stops on SIGINT`,
    );
    run(node, ["bin.mjs"], project);
  }
  const manifest = JSON.parse(readFileSync(join(project, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  };
  console.log(
    `\nconsumer check passed: ${Object.keys(manifest.dependencies)
      .filter((name) => name.startsWith("@bundlekit/"))
      .join(", ")}`,
  );
} catch (error) {
  console.error(`consumer check failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
