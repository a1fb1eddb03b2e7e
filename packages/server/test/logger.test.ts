import { createRedactor } from "@bundlekit/core";
import { Effect, Logger } from "effect";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createConsoleLogger, jsonLinesLogger } from "../src/logger.ts";

const NODE = "https://eth-mainnet.g.alchemy.com/v2/AbCdEf0123456789AbCdEf0123456789";
const KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";

/** The lines written to stderr while `run` runs. */
async function stderrLines(run: () => unknown): Promise<string[]> {
  const lines: string[] = [];
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  await run();
  vi.restoreAllMocks();
  return lines;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the service's log lines", () => {
  it("createConsoleLogger cuts URLs by default and hides the secrets it is given, in message and fields", async () => {
    const [plain] = await stderrLines(() =>
      createConsoleLogger("debug").error(`bundle failed at ${NODE}`),
    );
    expect(JSON.parse(plain!)).toMatchObject({
      level: "error",
      message: "bundle failed at https://eth-mainnet.g.alchemy.com/…",
    });
    const [line] = await stderrLines(() =>
      createConsoleLogger("debug", createRedactor([KEY])).debug("signing", {
        error: { cause: `key ${BigInt(KEY)} at ${NODE}` },
      }),
    );
    expect(JSON.parse(line!)).toMatchObject({
      level: "debug",
      message: "signing",
      error: { cause: "key [redacted] at https://eth-mainnet.g.alchemy.com/…" },
    });
  });

  it("jsonLinesLogger redacts Effect's log lines and their annotations", async () => {
    const lines = await stderrLines(() =>
      Effect.runPromise(
        Effect.logError(`internal error at ${NODE}`).pipe(
          Effect.annotateLogs({ key: KEY }),
          Effect.provide(Logger.layer([jsonLinesLogger(createRedactor([KEY]))])),
        ),
      ),
    );
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: "error",
      message: "internal error at https://eth-mainnet.g.alchemy.com/…",
      key: "0x[redacted]",
    });
  });
});
