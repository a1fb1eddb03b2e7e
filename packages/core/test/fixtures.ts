import { type Devnet, type EntryPointVersion, startDevnet, toSimpleAccount } from "@bundlekit/devnet";
import { type Address, createPublicClient, createWalletClient, custom, encodeFunctionData, type Hex, http, parseAbi, parseEther, parseGwei } from "viem";
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { getUserOperationHash, type SmartAccount } from "viem/account-abstraction";
import { expect } from "vitest";
import { type Bundler, type CreateBundlerParameters, createBundler } from "../src/engine/create-bundler.ts";
import { BundlerError, type DomainError } from "../src/errors/errors.ts";
import type { RpcError } from "../src/rpc/rpc-errors.ts";
import { onWire } from "./on-wire.ts";
import type { ChainClient } from "../src/ports/chain-client.ts";
import type { MempoolStore } from "../src/ports/mempool-store.ts";
import type { StateOverride } from "../src/ports/eth-call.ts";
import type { RelayerLease, RelayerSigner } from "../src/ports/relayer-signer.ts";
import { createMemoryMempoolStore } from "../src/mempool/memory-mempool-store.ts";
import type { UserOperation } from "../src/userop/types.ts";
import { canonicalEntryPoints } from "../src/entrypoint/version.ts";
import { type BundlerSettingsInput, mergeBundlerSettings } from "../src/engine/settings.ts";

/** The domain error a promise rejects with; fails the test when it resolves or rejects with anything else. */
export async function domainRejection(promise: Promise<unknown>): Promise<DomainError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BundlerError);
  return error as DomainError;
}

/**
 * What the domain error a promise rejects with answers on the wire (`toRpcError`: code, message
 * and data); fails the test when it resolves or rejects with anything else.
 */
export async function rejection(promise: Promise<unknown>): Promise<RpcError<Record<string, unknown>>> {
  return onWire(await domainRejection(promise));
}

/** The gas fields of an operation not yet estimated: what a client sends to `eth_estimateUserOperationGas`. */
export const unestimatedGas = { callGasLimit: 0n, verificationGasLimit: 0n, preVerificationGas: 0n, maxFeePerGas: 0n, maxPriorityFeePerGas: 0n } as const;

/** A relayer signer at the port: local viem accounts, one lease each. */
export function testSigner(keys: readonly Hex[]): RelayerSigner {
  const accounts = keys.map((k) => privateKeyToAccount(k));
  const busy = new Set<number>();
  return {
    addresses: accounts.map((a) => a.address),
    lease(): RelayerLease | undefined {
      const index = accounts.findIndex((_, i) => !busy.has(i));
      if (index < 0) return undefined;
      busy.add(index);
      const account = accounts[index]!;
      return { address: account.address, signTransaction: (tx) => account.signTransaction(tx), release: () => busy.delete(index) };
    },
  };
}

/**
 * Engine settings every test engine starts from: it bundles only when asked, and the in-process
 * tracer re-executes on the test's own thread. A pool of tracer threads takes about a second of
 * CPU to start, once per engine, and tests make many engines; the stand-alone service's tests run
 * the pool (its default).
 */
export const testEngineSettings: BundlerSettingsInput = { bundling: { mode: "manual" }, validation: { tracerWorkers: 0 } };

/** A devnet with a client, and engines over it that bundle only when asked. */
export async function engineFixture() {
  const devnet: Devnet = await startDevnet();
  const chain = devnet.chain;
  const client = createPublicClient({ chain, transport: http(devnet.rpcUrl), pollingInterval: 50 });
  const funder = createWalletClient({ chain, transport: http(devnet.rpcUrl), account: privateKeyToAccount(devnet.accountKeys.at(-1)!) });
  let funding: Promise<unknown> = Promise.resolve();

  async function makeBundler(
    options: Pick<CreateBundlerParameters, "policy" | "submitter" | "clock" | "instanceId" | "l1DataCost" | "preconfirmations" | "preconfirmationSigner" | "reputation"> & {
      store?: MempoolStore;
      /** Default: the fixture's client; e.g. a `countingClient()`. */
      client?: ChainClient;
      settings?: BundlerSettingsInput;
      relayerKeys?: readonly Hex[];
      /** Default: `testSigner` of `relayerKeys`; `"none"`: an engine without relayers (pull mode). */
      signer?: RelayerSigner | "none";
    } = {},
  ) {
    const store = options.store ?? createMemoryMempoolStore();
    const bundler = await createBundler({
      client: options.client ?? (client as unknown as ChainClient),
      store,
      policy: options.policy,
      submitter: options.submitter,
      clock: options.clock,
      instanceId: options.instanceId,
      l1DataCost: options.l1DataCost,
      preconfirmations: options.preconfirmations,
      preconfirmationSigner: options.preconfirmationSigner,
      reputation: options.reputation,
      signer: options.signer === "none" ? undefined : (options.signer ?? testSigner(options.relayerKeys ?? devnet.relayerKeys)),
      settings: mergeBundlerSettings(testEngineSettings, options.settings),
    });
    return { bundler, store };
  }

  /** A funded, counterfactual SimpleAccount with a fresh owner. */
  async function makeAccount(version: EntryPointVersion, fund = parseEther("1")) {
    // A fresh owner each time: owners need no funds (the funder pays the account itself).
    const owner = privateKeyToAccount(generatePrivateKey());
    const account = await toSimpleAccount({ client, owner, version });
    if (fund > 0n) {
      // One funder: send one transfer at a time so nonces never collide.
      const sent = funding.then(async () =>
        client.waitForTransactionReceipt({ hash: await funder.sendTransaction({ to: account.address, value: fund }) }),
      );
      funding = sent.catch(() => {});
      await sent;
    }
    return account;
  }

  /**
   * An operation of `account` moving `value` to `to`, gas from the engine's estimate, signed.
   * `overrides` replace estimated fields; the factory fields among them are estimated with.
   * `estimateWith` is a state override for the estimate only (e.g. a balance the account lacks).
   */
  async function makeOperation(
    bundler: Bundler,
    account: SmartAccount,
    call: { to: Address; value?: bigint; data?: Hex },
    overrides: Partial<UserOperation> & { nonce?: bigint } = {},
    estimateWith?: StateOverride,
  ): Promise<UserOperation> {
    const version = account.entryPoint.version as EntryPointVersion;
    const deployed = (await client.getCode({ address: account.address })) !== undefined;
    const factoryArgs = deployed ? {} : await account.getFactoryArgs();
    const nonce = overrides.nonce ?? (await account.getNonce({ key: 0n }));
    const callData = await account.encodeCalls([call]);
    const draft = (
      version === "0.6"
        ? {
            sender: account.address,
            nonce,
            initCode: factoryArgs.factory ? `${factoryArgs.factory}${factoryArgs.factoryData!.slice(2)}` : "0x",
            callData,
            paymasterAndData: "0x",
          }
        : { sender: account.address, nonce, ...factoryArgs, callData }
    ) as UserOperation;
    const deployment = Object.fromEntries(Object.entries(overrides).filter(([key]) => ["factory", "factoryData", "initCode"].includes(key)));
    const stub = { ...draft, ...deployment, ...unestimatedGas, signature: await account.getStubSignature() } as UserOperation;
    const estimate = await bundler.estimateUserOperationGas(stub, account.entryPoint.address, estimateWith);
    const op = {
      ...draft,
      callGasLimit: estimate.callGasLimit,
      verificationGasLimit: estimate.verificationGasLimit,
      preVerificationGas: estimate.preVerificationGas,
      maxFeePerGas: estimate.maxFeePerGas,
      maxPriorityFeePerGas: estimate.maxPriorityFeePerGas,
      ...overrides,
    } as UserOperation;
    return { ...op, signature: await account.signUserOperation({ ...(op as object), chainId: devnet.chainId } as never) } as UserOperation;
  }

  /** A client of the devnet that counts the requests it sends, by method. */
  function countingClient() {
    const requests: Record<string, number> = {};
    const node = http(devnet.rpcUrl)({ chain });
    const counting = createPublicClient({
      chain,
      pollingInterval: 50,
      transport: custom({
        request: ({ method, params }) => {
          requests[method] = (requests[method] ?? 0) + 1;
          return node.request({ method, params });
        },
      }),
    });
    return {
      client: counting as unknown as ChainClient,
      /** Requests sent since the last `reset`, by method. */
      requests,
      reset: () => {
        for (const method of Object.keys(requests)) delete requests[method];
      },
    };
  }

  return { devnet, client, makeBundler, makeAccount, makeOperation, countingClient, entryPoints: canonicalEntryPoints };
}

/**
 * A v0.8 operation of the EOA `eoa` as an EIP-7702 account delegating to `delegate`: a call to
 * itself, with the authorization (at account nonce 0) and the operation signed by the EOA.
 */
export async function eip7702Operation(
  eoa: PrivateKeyAccount,
  parameters: { nonce: bigint; delegate: Address; entryPoint: Address; chainId: number },
): Promise<UserOperation> {
  const authorization = await eoa.signAuthorization({ address: parameters.delegate, chainId: parameters.chainId, nonce: 0 });
  const op: UserOperation = {
    sender: eoa.address,
    nonce: parameters.nonce,
    callData: encodeFunctionData({ abi: parseAbi(["function execute(address target, uint256 value, bytes data)"]), functionName: "execute", args: [eoa.address, 0n, "0x"] }),
    callGasLimit: 100_000n,
    verificationGasLimit: 300_000n,
    preVerificationGas: 150_000n,
    maxFeePerGas: parseGwei("20"),
    maxPriorityFeePerGas: parseGwei("1"),
    signature: "0x",
    authorization: { ...authorization, yParity: authorization.yParity ?? 0 },
  };
  const hash = getUserOperationHash({ userOperation: op as never, entryPointAddress: parameters.entryPoint, entryPointVersion: "0.8", chainId: parameters.chainId });
  return { ...op, signature: await eoa.sign({ hash }) };
}
