import { privateKeyProblem } from "@bundlekit/signer-relayer";
import type { Hex } from "viem";
import { ConfigError, readSettingFile } from "./config-values.ts";

/**
 * The preconfirmation key from `file`: a `0x`-prefixed 32-byte hex private key (surrounding white
 * space ignored). Throws `ConfigError` naming the file and what is wrong, never its content.
 */
export function readPreconfirmationKey(file: string): Hex {
  const key = readSettingFile(file, "preconfirmation key file").trim();
  const problem = privateKeyProblem(key);
  if (problem) throw new ConfigError(`the preconfirmation key file ${file} (preconfirmationKeyFile) ${problem}`);
  return key as Hex;
}
