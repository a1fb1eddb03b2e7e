import type { Chain, Hex } from "viem";
import type { EntryPointVersion } from "./addresses.ts";
import { startAnvil } from "./anvil.ts";
import { devnetChain } from "./chain.ts";
import { type DevnetDeployment, deployErc4337Contracts } from "./deploy.ts";
import { DEVNET_MNEMONIC, deriveDevnetKeys } from "./keys.ts";

/** Options for {@link startDevnet}. All optional; the defaults suit parallel test runs. */
export interface StartDevnetOptions {
  /** Port to listen on; default: a free port chosen by the OS. */
  port?: number;
  /** Chain id; default 31337. */
  chainId?: number;
  /** Interval mining in seconds; default: automine (one block per transaction). */
  blockTime?: number;
  /**
   * How anvil orders a block's transactions: `fees` (highest priority fee first, anvil's default)
   * or `fifo` (arrival order: what a sequencer that places a bundle first needs).
   */
  order?: "fees" | "fifo";
  /** How many funded keys to reserve for relayers (`relayerKeys`); default 2. */
  relayerCount?: number;
  /** Path of the anvil executable; default `$ANVIL_PATH`, else the one from `@foundry-rs/anvil`. */
  anvilPath?: string;
  /** When false, anvil's output is echoed to this process's stdout/stderr; default true. */
  silent?: boolean;
}

/** A running local chain with the ERC-4337 contracts deployed at their canonical addresses. */
export interface Devnet {
  /** JSON-RPC endpoint, `http://127.0.0.1:PORT`. */
  rpcUrl: string;
  /** Chain id of the devnet. */
  chainId: number;
  /** The devnet as a viem `Chain`, for clients that need one (wallet clients, `waitForTransactionReceipt`). */
  chain: Chain;
  /** EntryPoint and SimpleAccountFactory addresses for each EntryPoint version. */
  deployments: Record<EntryPointVersion, DevnetDeployment>;
  /** Private keys of funded accounts reserved for bundler relayers (disjoint from `accountKeys`). */
  relayerKeys: Hex[];
  /** Other funded private keys, for tests to use as account owners or funders. */
  accountKeys: Hex[];
  /** Kills anvil. Idempotent; resolves once the process has exited. */
  stop(): Promise<void>;
  /** Same as {@link Devnet.stop}, for `await using devnet = await startDevnet()`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** Funded keys handed out as `accountKeys` at least, whatever `relayerCount` is. */
const MIN_ACCOUNT_KEYS = 10;
/** Funded accounts anvil creates at least; account #0 deploys the contracts. */
const MIN_FUNDED_ACCOUNTS = 20;

function assertInteger(name: string, value: number | undefined, min: number, max: number): void {
  if (value !== undefined && (!Number.isInteger(value) || value < min || value > max)) {
    throw new RangeError(
      `startDevnet: ${name} must be an integer in [${min}, ${max}], got ${value}`,
    );
  }
}

/**
 * Starts anvil (Prague hardfork) and deploys EntryPoint v0.6/v0.7/v0.8/v0.9 plus their
 * SimpleAccountFactory at the canonical addresses, so tests, examples and benchmarks run against a
 * real chain. Funded keys come from anvil's test mnemonic: #0 deploys, #1..relayerCount are
 * `relayerKeys`, the rest are `accountKeys`. Always call `stop()` (or use `await using`); the anvil
 * process is also killed if this process exits or is interrupted.
 */
export async function startDevnet(options: StartDevnetOptions = {}): Promise<Devnet> {
  const relayerCount = options.relayerCount ?? 2;
  const chainId = options.chainId ?? 31337;
  assertInteger("port", options.port, 0, 65_535);
  assertInteger("chainId", chainId, 1, Number.MAX_SAFE_INTEGER);
  assertInteger("relayerCount", relayerCount, 0, 1_000);
  if (options.blockTime !== undefined && !(options.blockTime > 0)) {
    throw new RangeError(`startDevnet: blockTime must be > 0 seconds, got ${options.blockTime}`);
  }
  if (options.order !== undefined && options.order !== "fees" && options.order !== "fifo") {
    throw new RangeError(`startDevnet: order must be "fees" or "fifo", got ${String(options.order)}`);
  }
  const accounts = Math.max(MIN_FUNDED_ACCOUNTS, 1 + relayerCount + MIN_ACCOUNT_KEYS);

  const starting = startAnvil({
    port: options.port ?? 0,
    chainId,
    blockTime: options.blockTime,
    accounts,
    mnemonic: DEVNET_MNEMONIC,
    hardfork: "prague",
    anvilPath: options.anvilPath,
    silent: options.silent ?? true,
    extraArgs: options.order ? ["--order", options.order] : undefined,
  });
  // Derive keys while anvil boots (the process is already spawned).
  const keys = deriveDevnetKeys(accounts);
  const anvil = await starting;

  let deployments: Record<EntryPointVersion, DevnetDeployment>;
  try {
    deployments = await deployErc4337Contracts({
      rpcUrl: anvil.rpcUrl,
      deployerKey: keys[0]!,
      mineBlocks: options.blockTime !== undefined,
    });
  } catch (error) {
    await anvil.stop();
    throw error;
  }

  const stop = (): Promise<void> => anvil.stop();
  return {
    rpcUrl: anvil.rpcUrl,
    chainId,
    chain: devnetChain(chainId, anvil.rpcUrl),
    deployments,
    relayerKeys: keys.slice(1, 1 + relayerCount),
    accountKeys: keys.slice(1 + relayerCount),
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
