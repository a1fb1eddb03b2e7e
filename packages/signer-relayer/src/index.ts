// @bundlekit/signer-relayer: relayer keys for the engine's `RelayerSigner` port.
export { createLocalKeySigner, InvalidRelayerKeyError } from "./local-key-signer.ts";
export { privateKeyProblem } from "./private-key-problem.ts";
