import { redactUrls } from "@bundlekit/core";
import { Cause, Config } from "effect";
import { ConfigError } from "./config.ts";

/**
 * A failure to start, in the one line `pnpm start` prints after "bundlekit: ": the message of
 * the setting at fault (a `ConfigError`, also when Effect's `Config` wraps it), or what failed
 * (any URL in it cut to scheme and host).
 */
export function describeFailure(cause: Cause.Cause<unknown>): string {
  const error = Cause.squash(cause);
  const setting =
    error instanceof Config.ConfigError ? (error.cause as { cause?: unknown }).cause : error;
  if (setting instanceof ConfigError) return setting.message;
  return `failed to start: ${redactUrls(String((setting as Error)?.message ?? setting).split("\n")[0]!)}`;
}
