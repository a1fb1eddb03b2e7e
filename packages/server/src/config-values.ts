import { readFileSync } from "node:fs";
import { type Address, getAddress, isAddress, parseUnits } from "viem";

/** A configuration problem, reported as one line at start-up. Never contains a secret. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/**
 * The text of a file a setting names (a secret's, say), or a `ConfigError` naming `what` and the
 * file with the reason (`ENOENT`, `EACCES`), never its content.
 */
export function readSettingFile(file: string, what: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigError(`cannot read the ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? "unreadable"}`);
  }
}

/** A checksummed address, or a `ConfigError` naming `name`. */
export function address(value: unknown, name: string): Address {
  if (typeof value !== "string" || !isAddress(value, { strict: false }))
    throw new ConfigError(`${name}: "${String(value)}" is not an address`);
  return getAddress(value);
}

/** An integer from `min` to `max` (a number, or its decimal text), or a `ConfigError` naming `name`. */
export function integer(
  value: unknown,
  name: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const n = typeof value === "number" ? value : Number(String(value));
  if (!Number.isInteger(n) || n < min || n > max)
    throw new ConfigError(
      `${name} must be an integer from ${min} to ${max}, got "${String(value)}"`,
    );
  return n;
}

/** An amount of ether: wei as an integer, or `"<amount> eth"`, `"<amount> gwei"`, `"<amount> wei"`. */
export function amount(value: unknown, name: string): bigint {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(eth|ether|gwei|wei)?\s*$/i.exec(String(value));
  const unit = match?.[2]?.toLowerCase() ?? "wei";
  const decimals = unit === "wei" ? 0 : unit === "gwei" ? 9 : 18;
  if (
    !match ||
    (typeof value !== "number" && typeof value !== "string") ||
    (match[1]!.split(".")[1] ?? "").length > decimals
  ) {
    throw new ConfigError(
      `${name} must be an amount such as "0.1 eth", "5 gwei" or an integer number of wei, got "${String(value)}"`,
    );
  }
  return parseUnits(match[1]!, decimals);
}
