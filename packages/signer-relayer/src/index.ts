export * from "./local-key-signer.ts";
export * from "./private-key-problem.ts";
