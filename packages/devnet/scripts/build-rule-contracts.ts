// Compiles contracts/rules/RuleProbes.sol with the solc npm package into RuleProbes.json (ABI and
// creation code of each contract). Run after editing the source: pnpm --filter @bundlekit/devnet build:rules
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const solc = require("solc") as { compile(input: string): string; version(): string };
const source = new URL("../contracts/rules/RuleProbes.sol", import.meta.url);
const input = {
  language: "Solidity",
  sources: { "RuleProbes.sol": { content: readFileSync(source, "utf8") } },
  settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: "cancun", outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } } },
};
const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
  errors?: { severity: string; formattedMessage: string }[];
  contracts: Record<string, Record<string, { abi: unknown; evm: { bytecode: { object: string } } }>>;
};
const errors = (output.errors ?? []).filter((e) => e.severity === "error");
if (errors.length > 0) {
  console.error(errors.map((e) => e.formattedMessage).join("\n"));
  process.exit(1);
}
const contracts = Object.fromEntries(
  Object.entries(output.contracts["RuleProbes.sol"]!)
    .filter(([name]) => name.startsWith("Rule"))
    .map(([name, c]) => [name, { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` }]),
);
writeFileSync(new URL("../contracts/rules/RuleProbes.json", import.meta.url), `${JSON.stringify({ compiler: solc.version(), contracts }, null, 1)}\n`);
console.log(`compiled ${Object.keys(contracts).join(", ")} with solc ${solc.version()}`);
