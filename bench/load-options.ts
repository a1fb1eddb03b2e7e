/** The command line of `pnpm bench` (bench/load.ts). */
import { parseArgs } from "node:util";
import type { EntryPointVersion } from "@bundlekit/devnet";
import { exitWithUsageOnHelp, integerFlag, UsageError } from "./script.ts";

export const usage = `Usage: pnpm bench [options]

  --ops N               user operations to send (default 200)
  --accounts M          SimpleAccounts sending them, each with consecutive nonces (default 10)
  --version V           EntryPoint version: 0.6, 0.7, 0.8 or 0.9 (default 0.7)
  --concurrency C       eth_sendUserOperation requests in flight at once (default: accounts)
  --relayers R          relayer keys of the service, bundles in flight at once (default 4)
  --rate R              open loop: offer R operations per second on a fixed schedule, whatever the
                        service answers (an account's next operation still waits for its previous
                        one to be accepted); unset: as fast as --concurrency allows
  --block-time S        the devnet mines a block every S seconds (default: one block per transaction)
  --bundle-interval MS  the service's bundleInterval (default: the service's own)
  --bundle-size S       the service's bundleSize (default: the service's own)
  --queue-depth D       at most D accepted, not yet included operations per account; 0 = no limit (default 3:
                        ERC-7562 lets an unstaked sender hold 4, and the service may still count one
                        that this script has already seen on chain)
  --estimate            every operation is estimated by the service (eth_estimateUserOperationGas) before
                        it is signed with the estimate's figures and sent, as wallets do; the estimate's
                        latency is recorded
  --receipts FROM       how the load generator sees an operation land: chain (default: it polls anvil for
                        UserOperationEvents every 25 ms) or service (each client polls the service's
                        eth_getUserOperationReceipt with viem's waitForUserOperationReceipt at viem's
                        default interval, as wallets do; the service's receipt lookups are measured)
  --retry-busy          keep the service's own simulation caps and send a request refused as busy
                        (-32005) again after its Retry-After, as a wallet does; refusals are counted
                        (default: the caps are raised to the offered concurrency, so none is refused)
  --request-timeout S   a request not answered within S seconds fails with a timeout (default 120;
                        viem's clients wait 10)
  --runs K              repeat the whole run K times (fresh devnet and service); results are medians (default 1)
  --timeout S           seconds to wait for the last receipt after the last send (default 120)
  --out DIR             where results go (default bench/results)
  --help`;

export interface LoadOptions {
  ops: number;
  accounts: number;
  version: EntryPointVersion;
  concurrency: number;
  relayers: number;
  rate: number | undefined;
  blockTime: number | undefined;
  bundleInterval: number | undefined;
  bundleSize: number | undefined;
  queueDepth: number;
  estimate: boolean;
  /** Where receipts are watched: on anvil directly, or through the service as wallets do. */
  receipts: "chain" | "service";
  retryBusy: boolean;
  requestTimeoutSeconds: number;
  runs: number;
  timeoutSeconds: number;
  out: string;
}

/** The options of `pnpm bench` from its arguments, or a `UsageError` naming the flag at fault. */
export function parseLoadOptions(argv: string[]): LoadOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      ops: { type: "string", default: "200" },
      accounts: { type: "string", default: "10" },
      version: { type: "string", default: "0.7" },
      concurrency: { type: "string" },
      relayers: { type: "string", default: "4" },
      rate: { type: "string" },
      "block-time": { type: "string" },
      "bundle-interval": { type: "string" },
      "bundle-size": { type: "string" },
      "queue-depth": { type: "string", default: "3" },
      estimate: { type: "boolean", default: false },
      receipts: { type: "string", default: "chain" },
      "retry-busy": { type: "boolean", default: false },
      "request-timeout": { type: "string", default: "120" },
      runs: { type: "string", default: "1" },
      timeout: { type: "string", default: "120" },
      out: { type: "string", default: "bench/results" },
      help: { type: "boolean", default: false },
    },
  });
  exitWithUsageOnHelp(values.help, usage);
  if (!["0.6", "0.7", "0.8", "0.9"].includes(values.version))
    throw new UsageError(`--version must be 0.6, 0.7, 0.8 or 0.9, got "${values.version}"`);
  if (values.receipts !== "chain" && values.receipts !== "service")
    throw new UsageError(`--receipts must be chain or service, got "${values.receipts}"`);
  const ops = integerFlag("ops", values.ops, 1);
  const accounts = integerFlag("accounts", values.accounts, 1);
  if (accounts > ops)
    throw new UsageError(`--accounts (${accounts}) must not exceed --ops (${ops})`);
  return {
    ops,
    accounts,
    version: values.version as EntryPointVersion,
    concurrency: integerFlag("concurrency", values.concurrency ?? String(accounts), 1),
    relayers: integerFlag("relayers", values.relayers, 1),
    rate: values.rate === undefined ? undefined : integerFlag("rate", values.rate, 1),
    blockTime:
      values["block-time"] === undefined
        ? undefined
        : integerFlag("block-time", values["block-time"], 1),
    bundleInterval:
      values["bundle-interval"] === undefined
        ? undefined
        : integerFlag("bundle-interval", values["bundle-interval"], 10),
    bundleSize:
      values["bundle-size"] === undefined
        ? undefined
        : integerFlag("bundle-size", values["bundle-size"], 1),
    queueDepth: integerFlag("queue-depth", values["queue-depth"], 0),
    estimate: values.estimate,
    receipts: values.receipts,
    retryBusy: values["retry-busy"],
    requestTimeoutSeconds: integerFlag("request-timeout", values["request-timeout"], 1),
    runs: integerFlag("runs", values.runs, 1),
    timeoutSeconds: integerFlag("timeout", values.timeout, 1),
    out: values.out,
  };
}

/**
 * `--rate`'s open loop: when each operation is due, in ms from the start of sending. The i-th
 * operation, taking the accounts' lanes in turn, is due at i / rate seconds.
 */
export function openLoopSchedule<T>(
  lanes: readonly (readonly T[])[],
  rate: number,
): Map<T, number> {
  const dueAt = new Map<T, number>();
  const longest = Math.max(...lanes.map((lane) => lane.length));
  let i = 0;
  for (let position = 0; position < longest; position++) {
    for (const lane of lanes) if (lane[position]) dueAt.set(lane[position]!, (i++ * 1000) / rate);
  }
  return dueAt;
}
