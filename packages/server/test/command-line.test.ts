import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { answerCommandLine, parseCommandLine } from "../src/command-line.ts";
import { ConfigError, loadConfig, settingNames, settings } from "../src/config.ts";

/** `answerCommandLine` with what it writes to each stream. */
function answer(argv: string[]) {
  const written = { stdout: "", stderr: "" };
  const exitCode = answerCommandLine(argv, settings, (stream, text) => (written[stream] += text));
  return { exitCode, ...written };
}

describe("bundlekit-server's command line", () => {
  it("answers --help and -h with the usage and every setting's variable and file key on stdout, exit code 0", () => {
    for (const flag of ["--help", "-h"]) {
      const { exitCode, stdout, stderr } = answer(["--config", "x.json", flag]);
      expect(exitCode).toBe(0);
      expect(stderr).toBe("");
      expect(stdout).toMatch(/^Usage: bundlekit-server \[--config <file>\]\n/);
      expect(stdout).toContain("docs/configuration.md");
      const listed = stdout
        .split("\n")
        .filter((line) => /^ {2}BUNDLEKIT_/.test(line))
        .map((line) => line.trim().split(/\s+/));
      expect(listed.map(([env]) => env)).toEqual(settingNames);
      expect(listed).toEqual(
        expect.arrayContaining([
          ["BUNDLEKIT_CONFIG"],
          ["BUNDLEKIT_RPC_URL", "rpcUrl"],
          ["BUNDLEKIT_RELAYER_KEYS", "relayerKeys"],
          ["BUNDLEKIT_ENTRYPOINTS", "entryPoints"],
          ["BUNDLEKIT_WS_IDLE_TIMEOUT_MS", "webSocketIdleTimeoutMs"],
          ["BUNDLEKIT_USEROPS_TTL", "useropsTTL"],
          ["BUNDLEKIT_WHITELISTED_PAYMASTER"],
        ]),
      );
    }
  });

  it("pairs each variable with the file key loadConfig reads after it, and docs/configuration.md documents every key", () => {
    const doc = readFileSync(new URL("../../../docs/configuration.md", import.meta.url), "utf8");
    const keys = settings.flatMap((setting) => (setting.key === undefined ? [] : [setting.key]));
    expect(keys.length).toBeGreaterThan(70);
    expect(keys.filter((key) => !doc.includes(`\`${key}\``))).toEqual([]);
  });

  it("refuses an unknown argument with one line on stderr and exit code 2, before the service starts", () => {
    expect(answer(["--port", "5000"])).toEqual({
      exitCode: 2,
      stdout: "",
      stderr:
        'bundlekit: unknown argument "--port" (bundlekit-server --help lists what it takes)\n',
    });
    expect(answer(["--config"])).toMatchObject({
      exitCode: 2,
      stderr: "bundlekit: --config needs a file: --config <file>\n",
    });
  });

  it("starts the service for no arguments or a config file", () => {
    expect(answer([])).toEqual({ exitCode: undefined, stdout: "", stderr: "" });
    expect(answer(["--config", "bundler.json"]).exitCode).toBeUndefined();
    expect(parseCommandLine(["--config=bundler.json"])).toEqual({
      help: false,
      configFile: "bundler.json",
    });
  });

  it("is read the same way by loadConfig, so the program refuses what the command refuses", () => {
    expect(() => loadConfig({}, ["--verbose"])).toThrow(
      new ConfigError('unknown argument "--verbose" (bundlekit-server --help lists what it takes)'),
    );
  });

  // The exit code is the process's own: the one spawn, and it loads no devnet.
  it("exits 0 from the bin for --help and 2 for an unknown flag", () => {
    const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url));
    const run = (flag: string) =>
      spawnSync(process.execPath, ["--experimental-strip-types", "--no-warnings", bin, flag], {
        encoding: "utf8",
        timeout: 30_000,
      });
    const help = run("--help");
    expect({ status: help.status, stderr: help.stderr }).toEqual({ status: 0, stderr: "" });
    expect(help.stdout).toMatch(/^Usage: bundlekit-server/);
    const unknown = run("--bogus");
    expect({ status: unknown.status, stdout: unknown.stdout, stderr: unknown.stderr }).toEqual({
      status: 2,
      stdout: "",
      stderr:
        'bundlekit: unknown argument "--bogus" (bundlekit-server --help lists what it takes)\n',
    });
  });
});
