import { existsSync } from "node:fs";
import module from "node:module";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import {
  type MempoolPolicy,
  type MempoolPolicyName,
  mempoolPolicies,
  mempoolPolicyNames,
} from "@bundlekit/core";
import type { PolicyEntry } from "./experiment.ts";
import { type PolicyContext, replaySettings } from "./replay.ts";

/** A policy file `pnpm research --policy` cannot use: what is wrong with it. */
export class PolicyFileError extends Error {
  override name = "PolicyFileError";
}

/** The shipped policies by name, as the lab compares them: each replay makes a fresh one with the engine's `mempool.sameSenderCount`. */
export function builtInPolicy(name: MempoolPolicyName): PolicyEntry {
  return {
    name,
    source: "built-in",
    make: (context: PolicyContext) => mempoolPolicies[name](context),
  };
}

/** True for a value with a policy's shape: a name, and `admit` and `select` functions. */
function isPolicy(value: unknown): value is MempoolPolicy {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return (
    typeof candidate.name === "string" &&
    typeof candidate.admit === "function" &&
    typeof candidate.select === "function"
  );
}

let hooked = false;
/**
 * Let a policy file anywhere import `@bundlekit/core` (and the lab's other dependencies, such as
 * viem): a bare specifier the file's own folder cannot resolve is resolved from the lab's.
 */
function resolveBareSpecifiersFromTheLab(): void {
  if (hooked || typeof module.registerHooks !== "function") return;
  hooked = true;
  const lab = import.meta.url;
  module.registerHooks({
    resolve(specifier, context, next) {
      try {
        return next(specifier, context);
      } catch (error) {
        const bare =
          !specifier.startsWith(".") && !specifier.startsWith("/") && !specifier.includes(":");
        if (!bare || (error as { code?: string }).code !== "ERR_MODULE_NOT_FOUND") throw error;
        return next(specifier, { ...context, parentURL: lab });
      }
    },
  });
}

/**
 * Load the policy of `spec`: a file path (TypeScript or JavaScript) relative to `cwd`, with an
 * optional `#export` naming which export to use. The module exports a `MempoolPolicy` or a
 * factory (`(context: PolicyContext) => MempoolPolicy`), as its default export or as its only
 * such named export. A factory is called once per replay; a policy object is loaded afresh for
 * each replay (its module is evaluated again), so no state carries over from one to the next.
 * Throws a `PolicyFileError` saying what is wrong.
 */
export async function loadPolicyFile(spec: string, cwd: string): Promise<PolicyEntry> {
  const [file, exportName] = spec.split("#") as [string, string | undefined];
  const path = resolve(cwd, file);
  if (!existsSync(path)) throw new PolicyFileError(`--policy ${spec}: no such file ${path}`);
  resolveBareSpecifiersFromTheLab();
  const url = pathToFileURL(path).href;
  const load = async (run: number): Promise<Record<string, unknown>> => {
    try {
      return await import(run === 0 ? url : `${url}?run=${run}`);
    } catch (error) {
      throw new PolicyFileError(
        `--policy ${spec}: cannot load ${path}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  };
  const exports = await load(0);
  const chosen = chooseExport(spec, exports, exportName);
  const exported = exports[chosen];
  if (isPolicy(exported)) {
    // Loaded again for every replay, so that each starts from the module's own state.
    let runs = 0;
    const make = async () => (await load(++runs))[chosen] as MempoolPolicy;
    return { name: exported.name, source: path, make };
  }
  const factory = exported as (context: PolicyContext) => unknown;
  const checked = (context: PolicyContext): MempoolPolicy => {
    const made = factory(context);
    if (!isPolicy(made))
      throw new PolicyFileError(
        `--policy ${spec}: export "${chosen}" is a function, but it returned ${describe(made)}, not a MempoolPolicy ({ name, admit, select })`,
      );
    return made;
  };
  const { resolved } = replaySettings(undefined, 1_000);
  const probe = checked({
    now: () => 0,
    sameSenderMempoolCount: resolved.mempool.sameSenderCount,
    settings: resolved,
  });
  return { name: probe.name, source: path, make: checked };
}

/** The export of `exports` to use: `wanted`, the default one, or the only policy or function among them. */
function chooseExport(
  spec: string,
  exports: Record<string, unknown>,
  wanted: string | undefined,
): string {
  const usable = (name: string) => isPolicy(exports[name]) || typeof exports[name] === "function";
  if (wanted !== undefined) {
    if (!(wanted in exports))
      throw new PolicyFileError(
        `--policy ${spec}: the module has no export "${wanted}" (it exports ${Object.keys(exports).join(", ") || "nothing"})`,
      );
    if (!usable(wanted))
      throw new PolicyFileError(
        `--policy ${spec}: export "${wanted}" is ${describe(exports[wanted])}, not a MempoolPolicy or a function making one`,
      );
    return wanted;
  }
  if ("default" in exports && usable("default")) return "default";
  const candidates = Object.keys(exports).filter(usable).sort();
  if (candidates.length === 1) return candidates[0]!;
  if (candidates.length === 0)
    throw new PolicyFileError(
      `--policy ${spec}: the module exports no MempoolPolicy and no function making one (it exports ${Object.keys(exports).join(", ") || "nothing"})`,
    );
  throw new PolicyFileError(
    `--policy ${spec}: the module exports several policies or functions (${candidates.join(", ")}): choose one with ${spec}#<name>`,
  );
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object"
    ? "an object without name, admit and select"
    : `a ${typeof value}`;
}

/** The policies to compare: the shipped ones named in `names` (all by default), then each file in `files`, in order. */
export async function resolvePolicies(
  names: readonly string[],
  files: readonly string[],
  cwd: string,
): Promise<PolicyEntry[]> {
  for (const name of names) {
    if (!mempoolPolicyNames.includes(name as MempoolPolicyName))
      throw new PolicyFileError(
        `unknown policy "${name}"; choose from ${mempoolPolicyNames.join(", ")}, or load one from a file with --policy ./file.ts`,
      );
  }
  const entries = names.map((name) => builtInPolicy(name as MempoolPolicyName));
  for (const file of files) entries.push(await loadPolicyFile(file, cwd));
  const seen = new Map<string, string>();
  for (const entry of entries) {
    const earlier = seen.get(entry.name);
    if (earlier !== undefined)
      throw new PolicyFileError(
        `two policies are named "${entry.name}" (${earlier} and ${entry.source}): give each its own name`,
      );
    seen.set(entry.name, entry.source);
  }
  return entries;
}
