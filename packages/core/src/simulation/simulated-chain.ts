import {
  type Address,
  createPublicClient,
  custom,
  decodeAbiParameters,
  decodeFunctionData,
  encodeAbiParameters,
  encodeErrorResult,
  encodeFunctionResult,
  type Hash,
  type Hex,
  toFunctionSelector,
  toHex,
  zeroAddress,
} from "viem";
import { bundleGasOf } from "../bundle/bundle-gas.ts";
import { decodeHandleOps } from "../userop/decode-handle-ops.ts";
import { createEntryPointRegistry, type EntryPoint } from "../entrypoint/registry.ts";
import { entryPointRefusal } from "../errors/errors.ts";
import type { CoreChainMethodName } from "../chain/methods.ts";
import type { BlockHead, BlockSource } from "../ports/block-source.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import type { HandleOpsEstimate, Simulator } from "../ports/simulator.ts";
import type { SignedTransaction } from "../ports/relayer-signer.ts";
import type { SubmittedBundle, Submitter } from "../ports/submitter.ts";
import { userOperationEventTopic } from "../receipt/user-operation-event.ts";
import { getUserOperationHash } from "../userop/hash.ts";
import { fromPackedUserOperation, type PackedUserOperation } from "../userop/pack.ts";
import { factoryOf, paymasterOf, type UserOperation } from "../userop/types.ts";
import { maxOf, minOf } from "../utils/bigint-math.ts";
import { keccak256 } from "../utils/keccak.ts";
import type { ValidationResult } from "../ports/validation-result.ts";
import { parseValidationData } from "../validation/validation-data.ts";
import type { SimulatedClock } from "./simulated-clock.ts";
import { readSignedTransaction } from "./transaction-sender.ts";

/** How the workload says an operation behaves on the simulated chain. */
export interface SimulatedBehaviour {
  /** An `AAxx` reason when its validation fails (at admission, at bundling, and on chain). Default: it passes. */
  validationFailure?: string | undefined;
  /** False when its execution reverts (it is still included, with `success: false`). Default true. */
  executes?: boolean | undefined;
}

/** What becomes of one submitted transaction. */
export interface SimulatedDelivery {
  /** The chain never sees it (lost on the way, dropped by a builder). */
  drop?: boolean | undefined;
  /** Not includable before this many blocks have passed. */
  delayBlocks?: number | undefined;
}

export interface CreateSimulatedChainParameters {
  clock: SimulatedClock;
  chainId?: number;
  /** Milliseconds between blocks. Default 1000. */
  blockTimeMs?: number;
  /** Default 30,000,000. */
  blockGasLimit?: bigint;
  /** The genesis base fee; it then moves with block fullness (EIP-1559). Default 1 gwei. */
  initialBaseFee?: bigint;
  /** What `eth_maxPriorityFeePerGas` answers. Default 0.1 gwei. */
  priorityFee?: bigint;
  /** The EntryPoint the chain runs (v0.7 or v0.8). Default canonical v0.7. */
  entryPoint?: EntryPoint;
  /** Share of an operation's gas limits it uses when executed. Default 0.6. */
  gasUsedShare?: number;
  behaviour?: (op: UserOperation) => SimulatedBehaviour;
  /**
   * Keep the transactions, receipts and logs of only the last this many blocks, as a pruned node
   * does, so that a long replay holds what is recent rather than everything. Default: all.
   */
  retainBlocks?: number;
  delivery?: (transaction: { hash: Hash; sentAtBlock: bigint }) => SimulatedDelivery;
  /**
   * The stake and unstake delay an entity (account, factory or paymaster) has in the EntryPoint,
   * as validation reports it. Default: none staked.
   */
  stakeOf?: (entity: Address) => SimulatedStake | undefined;
  /** What the EntryPoint's `balanceOf` answers for an account's deposit, e.g. a paymaster's. Default 10^24 wei. */
  depositOf?: (account: Address) => bigint;
}

/** An entity's stake in the EntryPoint: wei, and seconds it must wait to withdraw it. */
export interface SimulatedStake {
  /** Wei staked. */
  stake: bigint;
  /** Seconds the entity must wait between unlocking its stake and withdrawing it. */
  unstakeDelaySec: bigint;
}

interface PooledTransaction {
  hash: Hash;
  from: Address;
  nonce: number;
  to: Address;
  /** The calldata, a view of the signed transaction's bytes. */
  input: Uint8Array;
  /** Its `handleOps` operations, read from `input` when it is first executed, until it is mined. */
  ops: UserOperation[] | undefined;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  notBefore: bigint;
  /** The operations' hashes as the submitter gave them with a bundle (`SubmittedBundle`), for its events. */
  userOpHashes: readonly Hash[] | undefined;
}

interface SimulatedBlock {
  number: bigint;
  hash: Hash;
  parentHash: Hash;
  timestamp: bigint;
  baseFeePerGas: bigint;
  gasLimit: bigint;
  gasUsed: bigint;
  transactions: Hash[];
}

/** A transaction the simulated chain mined: its status, gas, and the UserOperationEvents it emitted. */
export interface SimulatedReceipt {
  transactionHash: Hash;
  from: Address;
  to: Address;
  nonce: number;
  status: "0x1" | "0x0";
  blockNumber: bigint;
  logs: { userOpHash: Hash; sender: Address; nonce: bigint; success: boolean; actualGasUsed: bigint; actualGasCost: bigint; logIndex: number }[];
  gasUsed: bigint;
  effectiveGasPrice: bigint;
}

/** The EntryPoint's `balanceOf(address)`: an account's deposit. */
const balanceOfSelector = toFunctionSelector("balanceOf(address)");

/** A JSON-RPC error a node would answer; viem turns it into its typed errors. */
class NodeError extends Error {
  readonly code: number;
  readonly data: Hex | undefined;
  constructor(code: number, message: string, data?: Hex) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

/**
 * A chain for research and tests, with no node and no real time: blocks every `blockTimeMs` of
 * the simulated clock, an EIP-1559 base fee that follows block fullness, a block gas limit, nonces,
 * receipts, logs and reorgs. It speaks the JSON-RPC the engine uses (through a viem client, the
 * `ChainClient` port), and provides the engine's `BlockSource` and `Submitter`. The EntryPoint's
 * simulations and `handleOps` are modelled, not executed: each operation validates and executes as
 * `behaviour` says, and uses `gasUsedShare` of its limits. Deterministic for a given workload.
 */
export function createSimulatedChain(parameters: CreateSimulatedChainParameters) {
  const { clock } = parameters;
  if (parameters.retainBlocks !== undefined && !(Number.isInteger(parameters.retainBlocks) && parameters.retainBlocks > 0)) {
    throw new RangeError(`retainBlocks must be a positive whole number of blocks, not ${parameters.retainBlocks}`);
  }
  const chainId = parameters.chainId ?? 31337;
  const blockTimeMs = parameters.blockTimeMs ?? 1000;
  const gasLimit = parameters.blockGasLimit ?? 30_000_000n;
  const entryPoint = parameters.entryPoint ?? createEntryPointRegistry().all.find((e) => e.version === "0.7")!;
  const simulationsAbi = entryPoint.simulations!.abi;
  const behaviourOf = (op: UserOperation) => parameters.behaviour?.(op) ?? {};
  const usedShare = BigInt(Math.round((parameters.gasUsedShare ?? 0.6) * 1000));
  const gasUsedBy = (op: UserOperation) => (bundleGasOf(op) * usedShare) / 1000n;
  const unstaked: SimulatedStake = { stake: 0n, unstakeDelaySec: 0n };
  const stakeOf = (entity: Address | undefined) => (entity && parameters.stakeOf?.(entity)) || unstaked;

  const blockHash = (number: bigint, salt: number) => keccak256(Buffer.from(`bundlekit simulated block ${number} ${salt}`));
  let reorgs = 0;
  const blocks: SimulatedBlock[] = [
    {
      number: 0n,
      hash: blockHash(0n, 0),
      parentHash: `0x${"0".repeat(64)}`,
      timestamp: BigInt(Math.floor(clock.now() / 1000)),
      baseFeePerGas: parameters.initialBaseFee ?? 1_000_000_000n,
      gasLimit,
      gasUsed: 0n,
      transactions: [],
    },
  ];
  const pool = new Map<Hash, PooledTransaction>();
  const receipts = new Map<Hash, SimulatedReceipt>();
  /** Transactions known to the chain (pooled or mined), for `eth_getTransactionByHash`. */
  const known = new Map<Hash, PooledTransaction>();
  const nonces = new Map<Address, number>();
  const events = new Map<Hash, Hash>(); // userOpHash → transaction hash
  const listeners = new Set<(head: BlockHead) => void>();

  const head = () => blocks.at(-1)!;
  const toHead = (block: SimulatedBlock): BlockHead => ({
    number: block.number,
    hash: block.hash,
    parentHash: block.parentHash,
    timestamp: block.timestamp,
    baseFeePerGas: block.baseFeePerGas,
    gasLimit: block.gasLimit,
  });
  const nextBaseFee = (block: SimulatedBlock) => {
    const target = block.gasLimit / 2n;
    const delta = (block.baseFeePerGas * (block.gasUsed - target)) / target / 8n;
    return maxOf(block.baseFeePerGas + delta, 7n);
  };
  const key = (address: Address) => address.toLowerCase() as Address;
  const hexOf = (bytes: Uint8Array): Hex => `0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex")}`;

  /** A bundle transaction's effect: its operations, validated and executed as the workload says. */
  function execute(transaction: PooledTransaction, block: SimulatedBlock, effectiveGasPrice: bigint): SimulatedReceipt {
    const base = { transactionHash: transaction.hash, from: transaction.from, to: transaction.to, nonce: transaction.nonce, blockNumber: block.number, effectiveGasPrice };
    if (key(transaction.to) !== key(entryPoint.address)) return { ...base, status: "0x1", logs: [], gasUsed: 21_000n };
    transaction.ops ??= decodeHandleOps(entryPoint, transaction.input);
    const { ops } = transaction;
    const behaviours = ops.map(behaviourOf);
    if (ops.length === 0 || behaviours.some((behaviour) => behaviour.validationFailure)) return { ...base, status: "0x0", logs: [], gasUsed: 50_000n };
    // The submitter's hashes are taken only when they are one per operation; otherwise the chain hashes.
    const told = transaction.userOpHashes?.length === ops.length ? transaction.userOpHashes : undefined;
    const logs = ops.map((op, logIndex) => {
      const used = gasUsedBy(op);
      const price = minOf(op.maxFeePerGas, block.baseFeePerGas + op.maxPriorityFeePerGas);
      return {
        userOpHash: told?.[logIndex] ?? getUserOperationHash(op, entryPoint, chainId),
        sender: op.sender,
        nonce: op.nonce,
        success: behaviours[logIndex]!.executes !== false,
        actualGasUsed: used,
        actualGasCost: used * price,
        logIndex,
      };
    });
    return { ...base, status: "0x1", logs, gasUsed: 21_000n + logs.reduce((sum, log) => sum + log.actualGasUsed, 0n) };
  }

  /** Mine the next block from the pool: transactions in nonce order per sender, highest tip first, within the gas limit. */
  function mine() {
    const parent = head();
    const baseFeePerGas = parent.number === 0n && parent.gasUsed === 0n ? parent.baseFeePerGas : nextBaseFee(parent);
    const block: SimulatedBlock = {
      number: parent.number + 1n,
      hash: blockHash(parent.number + 1n, reorgs),
      parentHash: parent.hash,
      timestamp: BigInt(Math.floor(clock.now() / 1000)),
      baseFeePerGas,
      gasLimit,
      gasUsed: 0n,
      transactions: [],
    };
    const tip = (t: PooledTransaction) => minOf(t.maxFeePerGas - baseFeePerGas, t.maxPriorityFeePerGas);
    const ready = [...pool.values()]
      .filter((t) => t.notBefore <= block.number && t.maxFeePerGas >= baseFeePerGas)
      .sort((a, b) => (tip(a) === tip(b) ? a.nonce - b.nonce : tip(a) > tip(b) ? -1 : 1));
    for (let progress = true; progress; ) {
      progress = false;
      for (const transaction of ready) {
        if (!pool.has(transaction.hash) || (nonces.get(key(transaction.from)) ?? 0) !== transaction.nonce) continue;
        const receipt = execute(transaction, block, baseFeePerGas + tip(transaction));
        if (block.gasUsed + receipt.gasUsed > gasLimit) continue;
        pool.delete(transaction.hash);
        transaction.ops = undefined;
        for (const other of pool.values()) if (key(other.from) === key(transaction.from) && other.nonce === transaction.nonce) pool.delete(other.hash);
        nonces.set(key(transaction.from), transaction.nonce + 1);
        block.gasUsed += receipt.gasUsed;
        block.transactions.push(transaction.hash);
        receipts.set(transaction.hash, receipt);
        for (const log of receipt.logs) events.set(log.userOpHash, transaction.hash);
        progress = true;
      }
    }
    blocks.push(block);
    if (parameters.retainBlocks !== undefined) forgetBlock(block.number - BigInt(parameters.retainBlocks));
    for (const listener of listeners) listener(toHead(block));
  }

  /** Forget block `number`'s transactions, receipts and logs (the block itself stays). */
  function forgetBlock(number: bigint) {
    const block = number > 0n ? blocks[Number(number)] : undefined;
    if (!block) return;
    for (const hash of block.transactions) {
      for (const log of receipts.get(hash)?.logs ?? []) events.delete(log.userOpHash);
      receipts.delete(hash);
      known.delete(hash);
    }
    block.transactions = [];
  }

  let producing = true;
  const produce = () => {
    if (!producing) return;
    mine();
    clock.setTimeout(produce, blockTimeMs);
  };
  clock.setTimeout(produce, blockTimeMs);

  /**
   * A signed transaction the chain is sent: read from its bytes, as a node reads them (its hash and
   * sender are the chain's own, whatever the `SignedTransaction` says).
   */
  async function submit(signed: SignedTransaction | Hex, bundle?: SubmittedBundle): Promise<Hash> {
    const bytes = typeof signed === "string" ? Buffer.from(signed.slice(2), "hex") : signed.bytes;
    // Awaited, as a node's answer would be: the engine's next steps run after this tick, not inside it.
    const { hash, from, nonce, to, input, maxFeePerGas, maxPriorityFeePerGas } = await readSignedTransaction(bytes);
    if (known.has(hash) && !receipts.has(hash)) throw new NodeError(-32000, "already known");
    if (nonce < (nonces.get(key(from)) ?? 0)) throw new NodeError(-32000, "nonce too low");
    const rival = [...pool.values()].find((t) => key(t.from) === key(from) && t.nonce === nonce);
    if (rival && (maxFeePerGas * 10n < rival.maxFeePerGas * 11n || maxPriorityFeePerGas * 10n < rival.maxPriorityFeePerGas * 11n)) {
      throw new NodeError(-32000, "replacement transaction underpriced");
    }
    const delivery = parameters.delivery?.({ hash, sentAtBlock: head().number }) ?? {};
    const transaction: PooledTransaction = {
      hash,
      from,
      nonce,
      to: to ?? zeroAddress,
      input,
      ops: undefined,
      maxFeePerGas,
      maxPriorityFeePerGas,
      notBefore: head().number + 1n + BigInt(delivery.delayBlocks ?? 0),
      userOpHashes: bundle?.userOpHashes,
    };
    known.set(hash, transaction);
    if (delivery.drop) return hash;
    if (rival) pool.delete(rival.hash);
    pool.set(hash, transaction);
    return hash;
  }

  const blockJson = (block: SimulatedBlock) => ({
    number: toHex(block.number),
    hash: block.hash,
    parentHash: block.parentHash,
    timestamp: toHex(block.timestamp),
    baseFeePerGas: toHex(block.baseFeePerGas),
    gasLimit: toHex(block.gasLimit),
    gasUsed: toHex(block.gasUsed),
    miner: zeroAddress,
    transactions: block.transactions,
    logsBloom: `0x${"0".repeat(512)}`,
    nonce: "0x0000000000000000",
    difficulty: "0x0",
    extraData: "0x",
    size: "0x0",
    uncles: [],
  });
  const blockOf = (tag: unknown) => (tag === "latest" || tag === "pending" || tag === undefined ? head() : blocks[Number(BigInt(tag as string))]);
  const receiptBlock = (receipt: SimulatedReceipt) => blocks[Number(receipt.blockNumber)];

  /** An ABI word of a uint256 or bool, without `0x`: what `encodeAbiParameters` writes, without its checks (the values are the chain's own). */
  const word = (value: bigint) => value.toString(16).padStart(64, "0");
  const addressWord = (address: Address) => `0x${"0".repeat(24)}${address.slice(2).toLowerCase()}` as Hex;
  /** The event's `paymaster` topic: operations on the simulated chain have none. */
  const noPaymasterTopic = encodeAbiParameters([{ type: "address" }], [zeroAddress]);

  /** A JSON-RPC quantity: what `toHex` writes of a whole number, without its checks (the values are the chain's own). */
  const quantity = (value: bigint | number) => `0x${value.toString(16)}` as Hex;
  /** Where a receipt's transaction sits: its block and index, the same for each of its logs. */
  const placeOf = (receipt: SimulatedReceipt) => {
    const block = receiptBlock(receipt)!;
    return {
      blockNumber: quantity(block.number),
      blockHash: block.hash,
      transactionHash: receipt.transactionHash,
      transactionIndex: quantity(block.transactions.indexOf(receipt.transactionHash)),
    };
  };

  function logJson(place: ReturnType<typeof placeOf>, log: SimulatedReceipt["logs"][number]) {
    return {
      address: entryPoint.address,
      topics: [userOperationEventTopic, log.userOpHash, addressWord(log.sender), noPaymasterTopic],
      data: `0x${word(log.nonce)}${word(log.success ? 1n : 0n)}${word(log.actualGasCost)}${word(log.actualGasUsed)}` as Hex,
      ...place,
      logIndex: quantity(log.logIndex),
      removed: false,
    };
  }

  /** A receipt as the node sends it, written at each read (the engine reads a bundle's receipt once it is mined). */
  function receiptJson(receipt: SimulatedReceipt) {
    const place = placeOf(receipt);
    return {
      transactionHash: receipt.transactionHash,
      transactionIndex: place.transactionIndex,
      blockHash: place.blockHash,
      blockNumber: place.blockNumber,
      from: receipt.from,
      to: receipt.to,
      cumulativeGasUsed: quantity(receipt.gasUsed),
      gasUsed: quantity(receipt.gasUsed),
      effectiveGasPrice: quantity(receipt.effectiveGasPrice),
      contractAddress: null,
      logs: receipt.logs.map((log) => logJson(place, log)),
      logsBloom: `0x${"0".repeat(512)}`,
      status: receipt.status,
      type: "0x2",
    };
  }

  /** `simulateValidation` of one operation, as `EntryPointSimulations` answers it (or its `FailedOp`). */
  function simulateValidation(data: Hex): Hex {
    const { args } = decodeFunctionData({ abi: simulationsAbi, data });
    const op = fromPackedUserOperation(args![0] as PackedUserOperation);
    const failure = behaviourOf(op).validationFailure;
    if (failure) throw new NodeError(3, "execution reverted", encodeErrorResult({ abi: entryPoint.abi, errorName: "FailedOp", args: [0n, failure] }));
    const { preOpGas, prefund, sender, factory, paymasterStake } = validationOf(op);
    return encodeFunctionResult({
      abi: simulationsAbi,
      functionName: "simulateValidation",
      result: {
        returnInfo: { preOpGas, prefund, accountValidationData: 0n, paymasterValidationData: 0n, paymasterContext: "0x" },
        senderInfo: sender,
        factoryInfo: factory,
        paymasterInfo: paymasterStake,
        aggregatorInfo: { aggregator: zeroAddress, stakeInfo: unstaked },
      },
    });
  }

  /** An account's `validationData` of 0: no aggregator, no time range. The same for every operation, so read once (frozen, as it is shared). */
  const noValidationData = Object.freeze(parseValidationData(0n));

  /** What validation of a passing operation reports: the entities' stakes (`stakeOf`), no time range, all its verification gas used. */
  function validationOf(op: UserOperation): ValidationResult {
    return {
      preOpGas: op.preVerificationGas + op.verificationGasLimit,
      prefund: bundleGasOf(op) * op.maxFeePerGas,
      account: noValidationData,
      paymaster: undefined,
      paymasterContext: "0x",
      sender: stakeOf(op.sender),
      factory: stakeOf(factoryOf(op)),
      paymasterStake: stakeOf(paymasterOf(op)),
    };
  }

  /**
   * The same validation as a `Simulator`, with no ABI round trip: what `simulateValidation`
   * answers, decoded, or its `FailedOp` as the engine's error. It estimates a bundle from the
   * operations the engine says it carries, as `eth_estimateGas` of their `handleOps` answers,
   * without the calldata being written and read back; a bundle sent is still executed from the
   * calldata its transaction carries.
   */
  const simulator: Simulator = {
    mode: "unsafe",
    tracer: undefined,
    async simulateValidation(_entryPoint, op) {
      const failure = behaviourOf(op).validationFailure;
      if (failure) throw entryPointRefusal(failure);
      return { validation: validationOf(op), trace: undefined };
    },
    async estimateHandleOps(_entryPoint, ops) {
      return estimateOps(ops);
    },
    async close() {},
  };

  /** `FailedOp(index, reason)` revert data, by index and reason: a workload has few reasons, and bundles fail on them again and again. */
  const failedOps = new Map<string, Hex>();
  function failedOp(index: number, reason: string): Hex {
    const id = `${index} ${reason}`;
    const known = failedOps.get(id);
    if (known) return known;
    const data = encodeErrorResult({ abi: entryPoint.abi, errorName: "FailedOp", args: [BigInt(index), reason] });
    failedOps.set(id, data);
    return data;
  }

  /** What `eth_estimateGas` of `handleOps` carrying `ops` answers: what they use, or the first failing one's `FailedOp`. */
  function estimateOps(ops: readonly UserOperation[]): HandleOpsEstimate {
    const failing = ops.findIndex((op) => behaviourOf(op).validationFailure);
    if (failing >= 0) return { reverted: true, data: failedOp(failing, behaviourOf(ops[failing]!).validationFailure!), message: "execution reverted" };
    return { reverted: false, gas: 21_000n + ops.reduce((sum, op) => sum + gasUsedBy(op), 0n) };
  }

  /** `eth_estimateGas` of `handleOps` calldata: the operations it carries, estimated. */
  function estimateHandleOps(data: Hex): Hex {
    const estimate = estimateOps(decodeHandleOps(entryPoint, data));
    if (estimate.reverted) throw new NodeError(3, estimate.message, estimate.data);
    return toHex(estimate.gas);
  }

  /** The call object or value in first place, and the block tag or override in second. */
  type Call = { to: Address; data: Hex; topics?: (Hash | Hash[] | null | undefined)[] };
  type Params = [Call & Hex, string?];

  /** The node: one answer for each method every configuration of the engine calls (`chainMethods`), no more. */
  const methods = {
    eth_chainId: () => toHex(chainId),
    eth_blockNumber: () => toHex(head().number),
    eth_getBlockByNumber: (p: Params) => {
      const block = blockOf(p[0]);
      return block ? blockJson(block) : null;
    },
    eth_maxPriorityFeePerGas: () => toHex(parameters.priorityFee ?? 100_000_000n),
    eth_call: (p: Params) => {
      if (key(p[0].to) !== key(entryPoint.address)) throw new NodeError(-32000, `the simulated chain has no contract at ${p[0].to}`);
      if (p[0].data.startsWith(balanceOfSelector)) {
        const [account] = decodeAbiParameters([{ type: "address" }], `0x${p[0].data.slice(10)}`);
        return encodeAbiParameters([{ type: "uint256" }], [parameters.depositOf?.(account) ?? 10n ** 24n]);
      }
      return simulateValidation(p[0].data);
    },
    eth_estimateGas: (p: Params) => estimateHandleOps(p[0].data),
    eth_getTransactionCount: (p: Params) => {
      const address = key(p[0]);
      const latest = nonces.get(address) ?? 0;
      if (p[1] !== "pending") return toHex(latest);
      let next = latest;
      while ([...pool.values()].some((t) => key(t.from) === address && t.nonce === next)) next++;
      return toHex(next);
    },
    eth_getBalance: () => toHex(10n ** 24n),
    eth_sendRawTransaction: (p: Params) => submit(p[0]),
    eth_getTransactionReceipt: (p: Params) => {
      const receipt = receipts.get(p[0]);
      return receipt ? receiptJson(receipt) : null;
    },
    eth_getTransactionByHash: (p: Params) => {
      const transaction = known.get(p[0]);
      if (!transaction || (!pool.has(transaction.hash) && !receipts.has(transaction.hash))) return null;
      const receipt = receipts.get(transaction.hash);
      return {
        hash: transaction.hash,
        from: transaction.from,
        to: transaction.to,
        input: hexOf(transaction.input),
        nonce: toHex(transaction.nonce),
        blockNumber: receipt ? toHex(receipt.blockNumber) : null,
        blockHash: receipt ? receiptBlock(receipt)!.hash : null,
      };
    },
    eth_getLogs: (p: Params) => {
      // The operation hash topic: one, any of a list, or (absent) every operation.
      const topic = p[0].topics?.[1];
      const wanted = topic ? [topic].flat() : undefined;
      const hashes = wanted ? [...new Set(wanted.map((t) => events.get(t)).filter((h) => h !== undefined))] : [...new Set(events.values())];
      return hashes.flatMap((hash) => {
        const receipt = receipts.get(hash)!;
        const place = placeOf(receipt);
        return receipt.logs.filter((log) => !wanted || wanted.includes(log.userOpHash)).map((log) => logJson(place, log));
      });
    },
  } satisfies Record<CoreChainMethodName, (p: Params) => unknown>;

  async function request({ method, params = [] }: { method: string; params?: unknown[] }): Promise<unknown> {
    if (!Object.hasOwn(methods, method)) throw new NodeError(-32601, `the simulated chain does not serve ${method}`);
    return methods[method as CoreChainMethodName](params as Params);
  }

  const blockSource: BlockSource = {
    latest: async () => toHead(head()),
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };

  return {
    chainId,
    entryPoint,
    /** The chain as the engine's `ChainClient`. */
    client: createPublicClient({ transport: custom({ request }, { retryCount: 0 }), cacheTime: 0, pollingInterval: blockTimeMs }) as ChainClient,
    blocks: blockSource,
    /** The chain as the engine's `Submitter`; it also takes a signed transaction as hex, as `eth_sendRawTransaction` does. */
    submitter: { name: "simulated", submit: (signed: SignedTransaction | Hex, bundle?: SubmittedBundle) => submit(signed, bundle) } satisfies Submitter,
    /** Validation as the chain answers it, without going through JSON-RPC and the ABI: the same results as `client`'s `simulateValidation`, for speed. */
    simulator,
    /** The current head. */
    head: () => toHead(head()),
    /** The blocks mined so far (genesis first), with their transactions. */
    history: () => blocks.map((block) => ({ ...toHead(block), gasUsed: block.gasUsed, transactions: [...block.transactions] })),
    /** The transactions of block `number`, in order (none once it is older than `retainBlocks`). */
    transactionsOf: (number: bigint) => [...(blocks[Number(number)]?.transactions ?? [])],
    /** The receipt of a transaction: its operations' events. */
    receipt: (hash: Hash) => receipts.get(hash),
    /**
     * Take the last `depth` blocks off the chain: their transactions go back to the pool (as a
     * node re-queues them after a reorg), their receipts and events are gone.
     */
    reorg(depth: number) {
      reorgs++;
      for (const block of blocks.splice(blocks.length - depth, depth)) {
        for (const hash of block.transactions) {
          const receipt = receipts.get(hash)!;
          receipts.delete(hash);
          for (const log of receipt.logs) events.delete(log.userOpHash);
          nonces.set(key(receipt.from), Math.min(nonces.get(key(receipt.from)) ?? 0, receipt.nonce));
          pool.set(hash, { ...known.get(hash)!, notBefore: 0n });
        }
      }
    },
    /** Stop producing blocks. */
    stop() {
      producing = false;
    },
  };
}

export type SimulatedChain = ReturnType<typeof createSimulatedChain>;
