/**
 * `pnpm compile:contracts`: compile the project's own Solidity with the `solc` npm package and
 * write the artifacts (ABI, creation and runtime code) next to the code that loads them. The
 * artifacts are committed, so tests and CI never run the compiler; run this after changing a
 * contract and commit both.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import solc from "solc";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** One contract to build: its source, where its imports resolve, and the artifact to write. */
interface Target {
  source: string;
  contract: string;
  /** Import prefix → directory, e.g. the EntryPoint release the contract is built against. */
  remappings: Record<string, string>;
  artifact: string;
  /** The bundler's own code runs on any chain (paris); the devnet's contracts on the devnet (cancun). */
  evmVersion: "paris" | "cancun";
}

/** The directory of an npm package as `from` resolves it. */
function packageDir(from: string, name: string): string {
  return dirname(createRequire(join(root, from, "package.json")).resolve(`${name}/package.json`));
}

function entryPointRelease(version: "v07" | "v08" | "v09"): Record<string, string> {
  const contracts = packageDir("packages/devnet", `account-abstraction-${version}`);
  return {
    "@account-abstraction/contracts/": `${contracts}/`,
    "@openzeppelin/contracts/": `${dirname(createRequire(join(contracts, "package.json")).resolve("@openzeppelin/contracts/package.json"))}/`,
  };
}

const targets: Target[] = [
  {
    source: "packages/core/contracts/GasLimitSearch.sol",
    contract: "GasLimitSearch",
    remappings: {},
    artifact: "packages/core/src/gas/artifacts/GasLimitSearch.json",
    evmVersion: "paris",
  },
  {
    source: "packages/core/contracts/PostOpProbe.sol",
    contract: "PostOpProbe",
    remappings: {},
    artifact: "packages/core/src/gas/artifacts/PostOpProbe.json",
    evmVersion: "paris",
  },
  {
    source: "packages/devnet/contracts/VerifyingPaymaster08.sol",
    contract: "VerifyingPaymaster",
    remappings: entryPointRelease("v08"),
    artifact: "packages/devnet/src/artifacts/VerifyingPaymaster.v0.8.json",
    evmVersion: "cancun",
  },
  {
    source: "packages/devnet/contracts/PostOpWorkPaymaster.sol",
    contract: "PostOpWorkPaymaster",
    remappings: entryPointRelease("v07"),
    artifact: "packages/devnet/src/artifacts/PostOpWorkPaymaster.v0.7.json",
    evmVersion: "cancun",
  },
  {
    source: "packages/devnet/contracts/PostOpWorkPaymaster.sol",
    contract: "PostOpWorkPaymaster",
    remappings: entryPointRelease("v08"),
    artifact: "packages/devnet/src/artifacts/PostOpWorkPaymaster.v0.8.json",
    evmVersion: "cancun",
  },
  {
    source: "packages/devnet/contracts/VerifyingPaymaster09.sol",
    contract: "VerifyingPaymaster",
    remappings: entryPointRelease("v09"),
    artifact: "packages/devnet/src/artifacts/VerifyingPaymaster.v0.9.json",
    evmVersion: "cancun",
  },
  {
    source: "packages/devnet/contracts/PostOpWorkPaymaster09.sol",
    contract: "PostOpWorkPaymaster",
    remappings: entryPointRelease("v09"),
    artifact: "packages/devnet/src/artifacts/PostOpWorkPaymaster.v0.9.json",
    evmVersion: "cancun",
  },
  {
    source: "packages/devnet/contracts/testing/GasWorkloads.sol",
    contract: "GasWorkloads",
    remappings: {},
    artifact: "packages/devnet/src/artifacts/GasWorkloads.json",
    evmVersion: "cancun",
  },
  {
    source: "packages/devnet/contracts/testing/Simple7702Accounts.sol",
    contract: "Simple7702AccountV06",
    remappings: {},
    artifact: "packages/devnet/src/artifacts/Simple7702AccountV06.json",
    evmVersion: "cancun",
  },
  {
    source: "packages/devnet/contracts/testing/Simple7702Accounts.sol",
    contract: "Simple7702AccountV07",
    remappings: {},
    artifact: "packages/devnet/src/artifacts/Simple7702AccountV07.json",
    evmVersion: "cancun",
  },
  {
    source: "packages/devnet/contracts/testing/L1FeeStandIns.sol",
    contract: "GasPriceOracleStandIn",
    remappings: {},
    artifact: "packages/devnet/src/artifacts/GasPriceOracleStandIn.json",
    evmVersion: "cancun",
  },
  {
    source: "packages/devnet/contracts/testing/L1FeeStandIns.sol",
    contract: "NodeInterfaceStandIn",
    remappings: {},
    artifact: "packages/devnet/src/artifacts/NodeInterfaceStandIn.json",
    evmVersion: "cancun",
  },
];

function compile(target: Target) {
  const input = {
    language: "Solidity",
    sources: { [target.source]: { content: readFileSync(join(root, target.source), "utf8") } },
    settings: {
      evmVersion: target.evmVersion,
      optimizer: { enabled: true, runs: 1_000_000 },
      viaIR: false,
      outputSelection: {
        "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] },
      },
    },
  };
  const findImports = (path: string) => {
    for (const [prefix, dir] of Object.entries(target.remappings)) {
      if (path.startsWith(prefix))
        return { contents: readFileSync(join(dir, path.slice(prefix.length)), "utf8") };
    }
    try {
      return { contents: readFileSync(join(root, path), "utf8") };
    } catch {
      return { error: `not found: ${path}` };
    }
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
  const errors = (output.errors ?? []).filter((e: { severity: string }) => e.severity === "error");
  if (errors.length > 0)
    throw new Error(
      `${target.source}:\n${errors.map((e: { formattedMessage: string }) => e.formattedMessage).join("\n")}`,
    );
  const compiled = output.contracts[target.source][target.contract];
  const artifact = {
    contractName: target.contract,
    source: relative(dirname(join(root, target.artifact)), join(root, target.source)),
    compiler: `solc ${solc.version()}`,
    abi: compiled.abi,
    bytecode: `0x${compiled.evm.bytecode.object}`,
    deployedBytecode: `0x${compiled.evm.deployedBytecode.object}`,
  };
  writeFileSync(join(root, target.artifact), `${JSON.stringify(artifact, null, 2)}\n`);
  console.log(`${target.artifact}  (${(artifact.deployedBytecode.length - 2) / 2} bytes)`);
}

for (const target of targets) compile(target);
