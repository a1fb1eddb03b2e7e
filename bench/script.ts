/** What a bench script needs around its run: usage errors, logging, cleaning up on any exit. */

/** A bad flag: the script prints it with its usage and exits 2. */
export class UsageError extends Error {}

/** With `--help`: print the usage and exit 0. */
export function exitWithUsageOnHelp(help: boolean | undefined, usage: string) {
  if (!help) return;
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}

/** The value of flag `--name` as an integer of at least `min`, or a `UsageError` naming the flag. */
export function integerFlag(name: string, value: string, min: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min)
    throw new UsageError(`--${name} must be an integer of at least ${min}, got "${value}"`);
  return n;
}

/** Progress on stderr, so stdout holds only the result. */
export function log(message: string) {
  process.stderr.write(`${message}\n`);
}

/** The first line of an error, with its JSON-RPC code when it has one. */
export function describeError(error: unknown): string {
  const e = error as { code?: number; details?: string; shortMessage?: string; message?: string };
  const text = (e.details ?? e.shortMessage ?? e.message ?? String(error)).split("\n")[0]!;
  return e.code === undefined ? text : `${e.code}: ${text}`;
}

export function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Everything started for a run, stopped in reverse on success, error or a signal. */
const cleanups: (() => Promise<unknown>)[] = [];

/** Stop `cleanup` when the run ends, however it ends. */
export function onCleanUp(cleanup: () => Promise<unknown>) {
  cleanups.push(cleanup);
}

/** Stop everything started so far, newest first; failures are ignored. */
export async function cleanUp() {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
}

/** Set by a signal: the run was interrupted, whatever else fails while it stops. */
let interrupted: Promise<void> | undefined;

/** On Ctrl-C (or SIGTERM, SIGHUP): clean up and exit 130. */
export function cleanUpOnSignals() {
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => {
      process.stderr.write(`\n${signal}: stopping the service and the devnet\n`);
      interrupted ??= cleanUp().then(() => process.exit(130));
    });
  }
}

/**
 * Run `main`; on an error print it (with the usage for a `UsageError`, and `context()`'s lines
 * otherwise), clean up and exit 2 or 1.
 */
export function runScript(
  name: string,
  usage: string,
  main: () => Promise<void>,
  context: () => string[] = () => [],
) {
  cleanUpOnSignals();
  main().catch(async (error) => {
    // Stopping the service fails what was waiting on it: the interruption, not that, ends the run.
    if (interrupted) return interrupted;
    const usageError = error instanceof UsageError;
    process.stderr.write(
      `${name}: ${usageError ? error.message : ((error as Error).stack ?? String(error))}\n`,
    );
    if (usageError) process.stderr.write(`${usage}\n`);
    else for (const line of context()) process.stderr.write(`${line}\n`);
    await cleanUp();
    process.exit(usageError ? 2 : 1);
  });
}
