import type { Hash } from "viem";
import type { Bundler } from "../src/engine/create-bundler.ts";
import type { StatusChange } from "../src/status/status-change.ts";

/** Longest a test waits for an event before failing with what it waited for: a bound on a hang, well within the test's timeout. */
const hangMs = 45_000;

/**
 * Every status change `bundler` reports from now on, and waits for the one a test expects: each
 * resolves as the engine reports it, with no polling.
 */
export function recordStatusChanges(bundler: Pick<Bundler, "onStatusChange">) {
  const changes: StatusChange[] = [];
  const waiters = new Set<() => void>();
  bundler.onStatusChange((change) => {
    changes.push(change);
    for (const check of [...waiters]) check();
  });

  /** The first value `find` returns from the changes so far, as soon as there is one. */
  function until<T>(
    find: (changes: readonly StatusChange[]) => T | undefined,
    what: string,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const hang = setTimeout(() => {
        waiters.delete(check);
        reject(
          new Error(`no ${what} within ${hangMs / 1000} s; changes: ${JSON.stringify(changes)}`),
        );
      }, hangMs);
      const check = () => {
        const found = find(changes);
        if (found === undefined) return;
        clearTimeout(hang);
        waiters.delete(check);
        resolve(found);
      };
      waiters.add(check);
      check();
    });
  }

  /** The change of `userOpHash` to `status`: the first, or the one after `skip` earlier ones. */
  const change = (userOpHash: Hash, status: StatusChange["status"], skip = 0) =>
    until(
      (all) => all.filter((c) => c.userOpHash === userOpHash && c.status === status)[skip],
      `${status} #${skip + 1} of ${userOpHash}`,
    );

  /** The statuses `userOpHash` went through so far. */
  const statuses = (userOpHash: Hash) =>
    changes.filter((c) => c.userOpHash === userOpHash).map((c) => c.status);

  return { changes, until, change, statuses };
}
