import type { Setting } from "./config.ts";
import { ConfigError } from "./config-values.ts";

/** What the command line asks for: the usage text, or the service (with a config file, if named). */
export type CommandLine = { help: true } | { help: false; configFile: string | undefined };

/**
 * Read `bundlekit-server`'s arguments: `--config <file>` and `--help`. Anything else is a
 * `ConfigError` naming it, so that a mistyped flag stops the command instead of being ignored.
 */
export function parseCommandLine(argv: readonly string[]): CommandLine {
  let configFile: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const argument = argv[i]!;
    if (argument === "--help" || argument === "-h") return { help: true };
    if (argument === "--config") {
      const file = argv[++i];
      if (file === undefined || file.startsWith("-"))
        throw new ConfigError("--config needs a file: --config <file>");
      configFile = file;
    } else if (argument.startsWith("--config=")) {
      configFile = argument.slice("--config=".length);
    } else {
      throw new ConfigError(
        `unknown argument "${argument}" (bundlekit-server --help lists what it takes)`,
      );
    }
  }
  return { help: false, configFile };
}

/** `bundlekit-server --help`: the flags, and every setting's variable and file key (`settings`, as the service reads them). */
export function usage(settings: readonly Setting[]): string {
  const width = Math.max(...settings.map((setting) => setting.env.length));
  return [
    "Usage: bundlekit-server [--config <file>]",
    "",
    "The stand-alone ERC-4337 bundler (JSON-RPC at /v1/<chainId>/). With no BUNDLEKIT_RPC_URL it",
    "starts an embedded devnet (anvil with the canonical EntryPoints) and serves that.",
    "",
    "Options:",
    "  --config <file>  a JSON file of settings by their file keys (the same as BUNDLEKIT_CONFIG)",
    "  -h, --help       print this and exit",
    "",
    "Settings: the environment variable, which overrides the file's key. What each means and its",
    "default: docs/configuration.md.",
    ...settings.map(({ env, key }) => `  ${env.padEnd(width)}  ${key ?? ""}`.trimEnd()),
    "",
  ].join("\n");
}

/**
 * Answer the arguments that end the command before the service starts: `--help` (exit code 0,
 * usage on stdout) or a bad argument (2, one line on stderr). Undefined: start the service.
 */
export function answerCommandLine(
  argv: readonly string[],
  settings: readonly Setting[],
  write: (stream: "stdout" | "stderr", text: string) => void,
): number | undefined {
  let commandLine: CommandLine;
  try {
    commandLine = parseCommandLine(argv);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    write("stderr", `bundlekit: ${error.message}\n`);
    return 2;
  }
  if (!commandLine.help) return undefined;
  write("stdout", usage(settings));
  return 0;
}
