// @bundlekit/signer-relayer: relayer keys for the engine's `RelayerSigner` port.
export { createAccountSigner, createLocalKeySigner, InvalidRelayerKeyError, type RelayerAccount } from "./local-key-signer.ts";
export { privateKeyProblem } from "./private-key-problem.ts";
