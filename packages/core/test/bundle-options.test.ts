import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import {
  type Address,
  createPublicClient,
  createWalletClient,
  custom,
  type Hash,
  type Hex,
  http,
  multicall3Abi,
  parseEther,
  parseGwei,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { type BundlerSettingsInput, mergeBundlerSettings } from "../src/engine/settings.ts";
import { createBundler } from "../src/engine/create-bundler.ts";
import type { StatusChange } from "../src/status/status-change.ts";
import { RpcErrorCode } from "../src/rpc/rpc-errors.ts";
import type { ChainClient } from "../src/ports/chain-client.ts";
import type { Logger } from "../src/ports/logger.ts";
import { createMemoryMempoolStore } from "../src/mempool/memory-mempool-store.ts";
import { engineFixture, rejection, testEngineSettings, testSigner } from "./fixtures.ts";

/** Bundle options of the engine on a real anvil: fees, access lists, validation, relayers, relaying modes. */
describe("bundle options", () => {
  let fx: Awaited<ReturnType<typeof engineFixture>>;
  beforeAll(async () => {
    fx = await engineFixture();
  });
  afterAll(() => fx?.devnet.stop());

  const recipient = () => privateKeyToAccount(generatePrivateKey()).address;

  /** An engine with its own signer and a logger that keeps warnings. */
  async function engineWith(
    settings: BundlerSettingsInput,
    relayerKeys: readonly Hex[] = fx.devnet.relayerKeys,
  ) {
    const warnings: { message: string; fields?: Record<string, unknown> }[] = [];
    const logger: Logger = {
      debug() {},
      info() {},
      error() {},
      warn: (message, fields) => void warnings.push({ message, fields }),
    };
    const store = createMemoryMempoolStore();
    const bundler = await createBundler({
      client: fx.client as unknown as ChainClient,
      store,
      signer: testSigner(relayerKeys),
      logger,
      settings: mergeBundlerSettings(testEngineSettings, settings),
    });
    return { bundler, store, warnings };
  }

  describe("enforceGasPrice", () => {
    it("rejects fees more than enforceGasPriceThreshold below the suggestion with -32602 naming the minimum", async () => {
      const { bundler } = await engineWith({ gas: { enforceGasPrice: true, enforceGasPriceThresholdPercent: 10 } });
      const account = await fx.makeAccount("0.7");
      // A base fee of its own: where the blocks mined before have let it decay to almost nothing,
      // 85% of the suggested maxFeePerGas is below the suggested tip, and the tip is what is refused.
      const baseFee = (await fx.client.getBlock()).baseFeePerGas!;
      const mineWithBaseFee = async (fee: bigint) => {
        await fx.client.request({ method: "anvil_setNextBlockBaseFeePerGas", params: [`0x${fee.toString(16)}`] } as never);
        await fx.client.request({ method: "evm_mine" } as never);
      };
      await mineWithBaseFee(parseGwei("10"));
      onTestFinished(() => mineWithBaseFee(baseFee));
      const suggested = await bundler.getGasPrice();
      const cheapTip = await fx.makeOperation(
        bundler,
        account,
        { to: recipient(), value: 1n },
        {
          maxPriorityFeePerGas: (suggested.maxPriorityFeePerGas * 80n) / 100n,
          maxFeePerGas: suggested.maxFeePerGas,
        },
      );
      const tip = await rejection(bundler.sendUserOperation(cheapTip, account.entryPoint.address));
      expect(tip.code).toBe(RpcErrorCode.invalidParams);
      expect(tip.data).toMatchObject({ field: "maxPriorityFeePerGas" });
      const required = (suggested.maxPriorityFeePerGas * 90n) / 100n;
      expect(tip.message).toContain(`required minimum of ${required} wei`);

      const cheapCap = await fx.makeOperation(
        bundler,
        account,
        { to: recipient(), value: 1n },
        {
          maxFeePerGas: (suggested.maxFeePerGas * 85n) / 100n,
        },
      );
      const cap = await rejection(bundler.sendUserOperation(cheapCap, account.entryPoint.address));
      expect(cap.code).toBe(RpcErrorCode.invalidParams);
      expect(cap.data).toMatchObject({ field: "maxFeePerGas" });
      expect(cap.message).toMatch(/required minimum of \d+ wei/);

      // Within the threshold (5% below) is accepted.
      const close = await fx.makeOperation(
        bundler,
        account,
        { to: recipient(), value: 1n },
        {
          maxFeePerGas: (suggested.maxFeePerGas * 95n) / 100n,
          maxPriorityFeePerGas: (suggested.maxPriorityFeePerGas * 95n) / 100n,
        },
      );
      await expect(bundler.sendUserOperation(close, account.entryPoint.address)).resolves.toMatch(
        /^0x/,
      );
    });

    it("accepts the same low fees when it is off", async () => {
      const { bundler } = await engineWith({  });
      const account = await fx.makeAccount("0.7");
      const suggested = await bundler.getGasPrice();
      const op = await fx.makeOperation(
        bundler,
        account,
        { to: recipient(), value: 1n },
        {
          maxPriorityFeePerGas: (suggested.maxPriorityFeePerGas * 50n) / 100n,
        },
      );
      await expect(bundler.sendUserOperation(op, account.entryPoint.address)).resolves.toMatch(
        /^0x/,
      );
    });
  });

  describe("eip2930", () => {
    it.each([true, false])(
      "eip2930 %s: the mined bundle transaction carries an access list only when on",
      async (eip2930) => {
        const { bundler } = await engineWith({ bundling: { accessList: eip2930 } });
        const account = await fx.makeAccount("0.8");
        const op = await fx.makeOperation(bundler, account, { to: recipient(), value: 1n });
        const hash = await bundler.sendUserOperation(op, account.entryPoint.address);
        const [transactionHash] = await bundler.sendBundleNow();
        expect((await bundler.getUserOperationReceipt(hash))?.success).toBe(true);
        const transaction = await fx.client.getTransaction({ hash: transactionHash! });
        expect(transaction.type).toBe("eip1559");
        const listed = (transaction.accessList ?? []).map((entry) => entry.address.toLowerCase());
        if (eip2930) {
          expect(listed).toContain(account.entryPoint.address.toLowerCase());
          expect(listed).toContain(account.address.toLowerCase());
        } else {
          expect(listed).toEqual([]);
        }
      },
    );
  });

  describe("skipBundleValidation", () => {
    /** An operation admitted by `target`, whose nonce another engine then uses up on chain. */
    async function staleOperation(target: Awaited<ReturnType<typeof engineWith>>) {
      const account = await fx.makeAccount("0.7");
      const op = await fx.makeOperation(target.bundler, account, { to: recipient(), value: 1n });
      const hash = await target.bundler.sendUserOperation(op, account.entryPoint.address);
      // Another bundler includes a rival with the same nonce: this one is invalid now, and not on chain.
      const other = await engineWith({  });
      const rival = await fx.makeOperation(other.bundler, account, { to: recipient(), value: 2n });
      await other.bundler.sendUserOperation(rival, account.entryPoint.address);
      await other.bundler.sendBundleNow();
      return hash;
    }

    it("off: the re-simulation drops an operation that became invalid and sends nothing", async () => {
      const target = await engineWith({  });
      const changes: StatusChange[] = [];
      target.bundler.onStatusChange((c) => changes.push(c));
      const hash = await staleOperation(target);
      expect(await target.bundler.sendBundleNow()).toEqual([]);
      expect(changes.at(-1)).toMatchObject({
        userOpHash: hash,
        status: "dropped",
        reason: expect.stringMatching(/^AA\d\d /),
      });
    });

    it("on: the bundle is sent unsimulated; after its revert the operation is retried, then fails after maxBundleAttempts", async () => {
      const target = await engineWith({ bundling: { skipValidation: true }, tracking: { maxAttempts: 2 } });
      const changes: StatusChange[] = [];
      target.bundler.onStatusChange((c) => changes.push(c));
      const hash = await staleOperation(target);
      const [first] = await target.bundler.sendBundleNow();
      expect((await fx.client.getTransactionReceipt({ hash: first! })).status).toBe("reverted");
      expect(changes.at(-1)).toEqual({
        userOpHash: hash,
        status: "pending",
        reason: "its bundle transaction reverted; back in the pool",
        transactionHash: first,
      });
      const [second] = await target.bundler.sendBundleNow();
      expect(second).not.toBe(first);
      expect(changes.at(-1)).toMatchObject({
        userOpHash: hash,
        status: "failed",
        reason: "its bundle transaction reverted (2 bundles mined without it)",
        transactionHash: second,
      });
      expect(await target.bundler.sendBundleNow()).toEqual([]);
    });

    it.each(["0.6", "0.7", "0.8", "0.9"] as const)(
      "on: a valid v%s bundle is included, its gas limit from the operations' own limits",
      async (version) => {
        const { bundler } = await engineWith({ bundling: { skipValidation: true, gasLimitMarkupPercent: 0 } });
        const account = await fx.makeAccount(version);
        const op = await fx.makeOperation(bundler, account, { to: recipient(), value: 1n });
        const hash = await bundler.sendUserOperation(op, account.entryPoint.address);
        const [transactionHash] = await bundler.sendBundleNow();
        expect((await bundler.getUserOperationReceipt(hash))?.success).toBe(true);
        const transaction = await fx.client.getTransaction({ hash: transactionHash! });
        expect(transaction.gas).toBeGreaterThanOrEqual(
          op.preVerificationGas + op.verificationGasLimit + op.callGasLimit,
        );
      },
    );
  });

  describe("minSignerBalance", () => {
    it("skips a relayer below it with a warning and bundles with a funded one", async () => {
      const poor = generatePrivateKey();
      const { bundler, warnings } = await engineWith({ relaying: { minSignerBalance: parseEther("0.5") } }, [
        poor,
        fx.devnet.relayerKeys[0]!,
      ]);
      const account = await fx.makeAccount("0.7");
      const hash = await bundler.sendUserOperation(
        await fx.makeOperation(bundler, account, { to: recipient(), value: 1n }),
        account.entryPoint.address,
      );
      const [transactionHash] = await bundler.sendBundleNow();
      expect((await fx.client.getTransaction({ hash: transactionHash! })).from).toBe(
        privateKeyToAccount(fx.devnet.relayerKeys[0]!).address.toLowerCase(),
      );
      expect((await bundler.getUserOperationReceipt(hash))?.success).toBe(true);
      expect(warnings).toContainEqual({
        message: expect.stringMatching(/below minSignerBalance/),
        fields: {
          relayer: privateKeyToAccount(poor).address,
          balance: "0 eth",
          minSignerBalance: "0.5 eth",
        },
      });
    });

    it("leaves operations pending while every relayer is below it", async () => {
      const { bundler, store } = await engineWith({  }, [generatePrivateKey()]);
      const account = await fx.makeAccount("0.7");
      const hash = await bundler.sendUserOperation(
        await fx.makeOperation(bundler, account, { to: recipient(), value: 1n }),
        account.entryPoint.address,
      );
      expect(await bundler.sendBundleNow()).toEqual([]);
      expect((await store.get(hash))?.status).toBe("pending");
    });

    it("reads relayer balances through the configured Multicall3 in one call", async () => {
      const multicall = await deployMulticall3();
      const calls: { method: string; to?: string }[] = [];
      const counting = createPublicClient({
        chain: fx.client.chain,
        transport: custom({
          request: (args: { method: string; params?: unknown }) => {
            const [call] = (args.params as { to?: string }[] | undefined) ?? [];
            calls.push({
              method: args.method,
              to: typeof call === "object" ? call?.to : undefined,
            });
            return fx.client.request(args as never);
          },
        }),
      });
      const poor = generatePrivateKey();
      const bundler = await createBundler({
        client: counting as unknown as ChainClient,
        store: createMemoryMempoolStore(),
        signer: testSigner([poor, ...fx.devnet.relayerKeys]),
        settings: mergeBundlerSettings(testEngineSettings, { relaying: { multicall } }),
      });
      const account = await fx.makeAccount("0.7");
      await bundler.sendUserOperation(
        await fx.makeOperation(bundler, account, { to: recipient(), value: 1n }),
        account.entryPoint.address,
      );
      calls.length = 0;
      const [transactionHash] = await bundler.sendBundleNow();
      expect((await fx.client.getTransaction({ hash: transactionHash! })).from).not.toBe(
        privateKeyToAccount(poor).address.toLowerCase(),
      );
      expect(
        calls.filter(
          (c) => c.method === "eth_call" && c.to?.toLowerCase() === multicall.toLowerCase(),
        ),
      ).toHaveLength(1);
      expect(calls.filter((c) => c.method === "eth_getBalance")).toHaveLength(0);
    });
  });

  describe("relayingMode and rpcEndpointSubmit", () => {
    let node: FakeSubmitNode;
    beforeAll(async () => {
      node = await startFakeSubmitNode(fx.devnet.rpcUrl);
    });
    afterAll(() => node?.close());

    it("conditional: sends eth_sendRawTransactionConditional with each sender's storage root to the submit endpoint", async () => {
      const { bundler } = await engineWith({ relaying: { mode: "conditional", submitUrl: node.url } });
      expect(bundler.settings.relaying.mode).toBe("conditional");
      const account = await fx.makeAccount("0.7");
      await fx
        .makeOperation(bundler, account, { to: recipient(), value: 1n })
        .then((op) => bundler.sendUserOperation(op, account.entryPoint.address));
      const [deployHash] = await bundler.sendBundleNow();
      const root = (await fx.client.getProof({ address: account.address, storageKeys: [] }))
        .storageHash;
      const hash = await bundler.sendUserOperation(
        await fx.makeOperation(bundler, account, { to: recipient(), value: 1n }),
        account.entryPoint.address,
      );
      const [transactionHash] = await bundler.sendBundleNow();

      expect((await bundler.getUserOperationReceipt(hash))?.success).toBe(true);
      const sent = node.requests.filter((r) => r.method === "eth_sendRawTransactionConditional");
      expect(sent.map((r) => r.hash)).toEqual([deployHash, transactionHash]);
      expect(sent[1]!.params[1]).toEqual({
        knownAccounts: { [account.address.toLowerCase()]: root },
      });
    });

    it("classic with rpcEndpointSubmit: the raw transaction goes to the submit endpoint", async () => {
      const { bundler } = await engineWith({ relaying: { submitUrl: node.url } });
      const account = await fx.makeAccount("0.6");
      const hash = await bundler.sendUserOperation(
        await fx.makeOperation(bundler, account, { to: recipient(), value: 1n }),
        account.entryPoint.address,
      );
      const [transactionHash] = await bundler.sendBundleNow();
      expect((await bundler.getUserOperationReceipt(hash))?.success).toBe(true);
      expect(
        node.requests.filter((r) => r.method === "eth_sendRawTransaction").map((r) => r.hash),
      ).toContain(transactionHash);
    });
  });

  /** Multicall3 (viem's copy of its creation code) deployed on the devnet. */
  async function deployMulticall3(): Promise<Address> {
    const source = readFileSync(
      fileURLToPath(new URL("./constants/contracts.js", import.meta.resolve("viem"))),
      "utf8",
    );
    const bytecode = /multicall3Bytecode = '(0x[0-9a-f]+)'/.exec(source)![1] as Hex;
    const wallet = createWalletClient({
      chain: fx.client.chain,
      transport: http(fx.devnet.rpcUrl),
      account: privateKeyToAccount(fx.devnet.accountKeys.at(-2)!),
    });
    const deployed = await fx.client.waitForTransactionReceipt({
      hash: await wallet.deployContract({ abi: multicall3Abi, bytecode }),
    });
    return deployed.contractAddress!;
  }
});

interface FakeSubmitNode {
  url: string;
  requests: { method: string; params: unknown[]; hash?: Hash }[];
  close(): Promise<void>;
}

/**
 * A node that only takes transactions, in front of anvil (which has no
 * `eth_sendRawTransactionConditional`): it checks `knownAccounts` against anvil's storage roots
 * as ERC-7796 asks, then passes the raw transaction on. Everything else is forwarded.
 */
async function startFakeSubmitNode(anvilUrl: string): Promise<FakeSubmitNode> {
  const requests: FakeSubmitNode["requests"] = [];
  const anvil = async (method: string, params: unknown[]) => {
    const response = await fetch(anvilUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    return (await response.json()) as { result?: unknown; error?: unknown };
  };
  const server: Server = createServer(async (request, response) => {
    let body = "";
    for await (const chunk of request) body += chunk;
    const { id, method, params } = JSON.parse(body) as {
      id: number;
      method: string;
      params: unknown[];
    };
    const record = { method, params } as FakeSubmitNode["requests"][number];
    requests.push(record);
    let answer: { result?: unknown; error?: unknown };
    if (method === "eth_sendRawTransactionConditional") {
      const { knownAccounts } = params[1] as { knownAccounts: Record<Address, Hex> };
      let mismatch = false;
      for (const [address, root] of Object.entries(knownAccounts)) {
        const proof = (await anvil("eth_getProof", [address, [], "latest"])).result as {
          storageHash: Hex;
        };
        if (proof.storageHash !== root) mismatch = true;
      }
      answer = mismatch
        ? { error: { code: -32003, message: "knownAccounts condition not met" } }
        : await anvil("eth_sendRawTransaction", [params[0]]);
    } else {
      answer = await anvil(method, params);
    }
    if (method.startsWith("eth_sendRawTransaction") && typeof answer.result === "string")
      record.hash = answer.result as Hash;
    response.setHeader("content-type", "application/json");
    response.end(JSON.stringify({ jsonrpc: "2.0", id, ...answer }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
