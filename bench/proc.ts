import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** Clock ticks per second of /proc/<pid>/stat times (`getconf CLK_TCK`, 100 on Linux almost everywhere). */
const ticksPerSecond = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** Fields of /proc/<pid>/stat after the command name, which may itself hold spaces and parentheses. */
function statFields(pid: number): { comm: string; fields: string[] } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  return {
    comm: text.slice(open + 1, close),
    fields: text
      .slice(close + 2)
      .trim()
      .split(" "),
  };
}

/**
 * CPU seconds (user + system) a process has used so far, read from /proc so the measured
 * process needs no cooperation. Undefined when the process is gone or /proc is not there.
 */
export function processCpuSeconds(pid: number): number | undefined {
  const stat = statFields(pid);
  if (!stat) return undefined;
  // After the name: state(0) ppid(1) … utime(11) stime(12), i.e. fields 14 and 15 of proc(5).
  return (Number(stat.fields[11]) + Number(stat.fields[12])) / ticksPerSecond;
}

/** The pid of a direct child of `parent` whose command name is `name`, if there is exactly one. */
export function findChildPid(parent: number, name: string): number | undefined {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return undefined;
  }
  const matches = entries
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      const stat = statFields(pid);
      return stat?.comm === name && Number(stat.fields[1]) === parent;
    });
  return matches.length === 1 ? matches[0] : undefined;
}
