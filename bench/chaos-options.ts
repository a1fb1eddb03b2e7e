/** The command line of `pnpm chaos` (bench/chaos.ts), and the kill moments it implies. */
import { randomInt } from "node:crypto";
import { parseArgs } from "node:util";
import { killSchedule, seededRandom } from "./kill-schedule.ts";
import { exitWithUsageOnHelp, integerFlag, UsageError } from "./script.ts";

export const usage = `Usage: pnpm chaos [options]

  --mode M          sqlite (one service), postgres (two services on one PostgreSQL, the first
                    killed) or both (default both)
  --ops N           operations per mode (default 500); with --rate, how long the load lasts
  --accounts M      SimpleAccounts sending them (default 100)
  --rate R          operations offered per second, on a fixed schedule (default 10)
  --kills K         kill -9s per mode, at random moments of the load (default 5)
  --block-time S    the devnet mines a block every S seconds (default 1)
  --relayers R      relayer keys of each service (default 2)
  --lease MS        the services' bundleClaimLeaseMs (default: the service's own, 60000)
  --database URL    PostgreSQL server for the postgres mode; a fresh schema is made and dropped
                    (default: BUNDLEKIT_TEST_DATABASE_URL, else 127.0.0.1:5432, else an embedded one)
  --seed N          seed of the kill moments (default: random; recorded)
  --timeout S       seconds to wait after the load for every accepted operation to settle (default 240)
  --out DIR         where results go (default bench/results)
  --log-dir DIR     keep every line each service wrote in DIR/chaos-<mode>-<n>.log (the services
                    log at BUNDLEKIT_LOG_LEVEL, default info)
  --help`;

export type Mode = "sqlite" | "postgres";

export interface ChaosOptions {
  modes: Mode[];
  ops: number;
  accounts: number;
  rate: number;
  kills: number;
  blockTime: number;
  relayers: number;
  leaseMs: number | undefined;
  database: string | undefined;
  seed: number;
  timeoutSeconds: number;
  out: string;
  logDir: string | undefined;
}

/** Kills start this long into the load and are at least this far apart (a restart takes 1-3 s). */
const FIRST_KILL_MS = 2_000;
const MIN_KILL_GAP_MS = 5_000;
/** The options of `pnpm chaos` from its arguments, or a `UsageError` naming what is wrong. */
export function parseChaosOptions(argv: string[]): ChaosOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      mode: { type: "string", default: "both" },
      ops: { type: "string", default: "500" },
      accounts: { type: "string", default: "100" },
      rate: { type: "string", default: "10" },
      kills: { type: "string", default: "5" },
      "block-time": { type: "string", default: "1" },
      relayers: { type: "string", default: "2" },
      lease: { type: "string" },
      database: { type: "string" },
      seed: { type: "string" },
      timeout: { type: "string", default: "240" },
      out: { type: "string", default: "bench/results" },
      "log-dir": { type: "string" },
      help: { type: "boolean", default: false },
    },
  });
  exitWithUsageOnHelp(values.help, usage);
  const modes: Record<string, Mode[]> = {
    sqlite: ["sqlite"],
    postgres: ["postgres"],
    both: ["sqlite", "postgres"],
  };
  if (!modes[values.mode])
    throw new UsageError(`--mode must be sqlite, postgres or both, got "${values.mode}"`);
  const options: ChaosOptions = {
    modes: modes[values.mode]!,
    ops: integerFlag("ops", values.ops, 1),
    accounts: integerFlag("accounts", values.accounts, 1),
    rate: integerFlag("rate", values.rate, 1),
    kills: integerFlag("kills", values.kills, 0),
    blockTime: integerFlag("block-time", values["block-time"], 1),
    relayers: integerFlag("relayers", values.relayers, 1),
    leaseMs: values.lease === undefined ? undefined : integerFlag("lease", values.lease, 1000),
    database: values.database,
    seed: values.seed === undefined ? randomInt(2 ** 31) : integerFlag("seed", values.seed, 0),
    timeoutSeconds: integerFlag("timeout", values.timeout, 1),
    out: values.out,
    logDir: values["log-dir"],
  };
  if (options.accounts > options.ops)
    throw new UsageError(`--accounts (${options.accounts}) must not exceed --ops (${options.ops})`);
  try {
    killTimes(options);
  } catch (error) {
    throw new UsageError(`${(error as Error).message}: raise --ops or lower --rate or --kills`);
  }
  return options;
}

/** The kill moments of a run, from its seed: spread over the load's schedule. */
export function killTimes(options: ChaosOptions): number[] {
  const loadMs = (options.ops / options.rate) * 1000;
  return killSchedule({
    count: options.kills,
    fromMs: FIRST_KILL_MS,
    toMs: loadMs,
    minGapMs: MIN_KILL_GAP_MS,
    random: seededRandom(options.seed),
  });
}
