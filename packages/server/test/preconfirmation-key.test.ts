import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.ts";
import { serviceRedactor } from "../src/service-redactor.ts";

const key = "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba";
const directory = mkdtempSync(join(tmpdir(), "bundlekit-preconf-key-"));

/** A file holding `content`, and what `loadConfig` makes of it as the preconfirmation key file. */
function withKeyFile(content: string) {
  const file = join(directory, `key-${Math.random().toString(16).slice(2)}`);
  writeFileSync(file, content);
  return { file, load: () => loadConfig({ BUNDLEKIT_PRECONFIRMATION_KEY_FILE: file }) };
}

describe("BUNDLEKIT_PRECONFIRMATION_KEY_FILE", () => {
  it("reads the key from the file, surrounding white space ignored; unset leaves preconfirmations unsigned", () => {
    expect(withKeyFile(`  ${key}\n`).load().preconfirmationKey).toBe(key);
    expect(loadConfig({}).preconfirmationKey).toBeUndefined();
    expect(loadConfig({ BUNDLEKIT_PRECONFIRMATION_KEY_FILE: "" }).preconfirmationKey).toBeUndefined();
  });

  it.each([
    ["not a key", "is not a 0x-prefixed 32-byte hex private key"],
    [`0x${"0".repeat(64)}`, "is out of range: a secp256k1 private key is from 1 to the curve order n − 1"],
    [key.slice(2), "is not a 0x-prefixed 32-byte hex private key"],
  ])("refuses a file holding %j, naming the file and the setting, never the content", (content, problem) => {
    const { file, load } = withKeyFile(content);
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(`the preconfirmation key file ${file} (preconfirmationKeyFile) ${problem}`);
  });

  it("refuses a file it cannot read, naming it", () => {
    const file = join(directory, "missing.key");
    expect(() => loadConfig({ BUNDLEKIT_PRECONFIRMATION_KEY_FILE: file })).toThrow(`cannot read the preconfirmation key file ${file}: ENOENT`);
  });

  it("hides the key in every log line and error, in any form; its address is not a secret", () => {
    const redactor = serviceRedactor(withKeyFile(key).load());
    const address = privateKeyToAccount(key).address;
    const forms = [key, key.slice(2).toUpperCase(), BigInt(key).toString()];
    expect(redactor.text([...forms, address].join(" | ")).split(" | ")).toEqual(["0x[redacted]", "[redacted]", "[redacted]", address]);
  });
});
