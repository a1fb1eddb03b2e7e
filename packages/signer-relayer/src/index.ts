export * from "./local-key-signer.ts";
