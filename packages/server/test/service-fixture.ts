import { type Devnet, type EntryPointVersion, startDevnet, toSimpleAccount } from "@bundlekit/devnet";
import {
  type Address,
  createPublicClient,
  createWalletClient,
  type Hex,
  http,
  parseEther,
  type PublicClient,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { createBundlerClient, formatUserOperationRequest, type SmartAccount } from "viem/account-abstraction";
import { type Logger, mergeBundlerSettings } from "@bundlekit/core";
import { loadConfig, type ServerConfig } from "../src/config.ts";
import { type BundlerService, startBundlerService } from "../src/server.ts";
import { type NodeProxy, startNodeProxy } from "./node-proxy.ts";

/** A JSON-RPC answer as it came over HTTP. */
export interface HttpAnswer {
  status: number;
  contentType: string | null;
  // biome-ignore lint/suspicious/noExplicitAny: a test reads arbitrary JSON shapes
  body: any;
}

/**
 * The stand-alone service on a fresh devnet, bundling only when asked, with helpers to talk to
 * it over HTTP exactly as a client would and to build signed operations in their wire form.
 * With `behindProxy`, the service reaches the devnet through a `NodeProxy` that a test can make hang;
 * with `nodeUrl`, through the URL it gives (e.g. a proxy of the test's own). `logger` receives the
 * service's log lines.
 */
export async function serviceFixture(
  overrides: Partial<ServerConfig> = {},
  setup: { behindProxy?: boolean; nodeUrl?: (devnet: Devnet) => Promise<string>; logger?: Logger } = {},
) {
  const devnet: Devnet = await startDevnet();
  const proxy: NodeProxy | undefined = setup.behindProxy ? await startNodeProxy(devnet.rpcUrl) : undefined;
  const nodeUrl = setup.nodeUrl ? await setup.nodeUrl(devnet) : (proxy?.url ?? devnet.rpcUrl);
  const base = loadConfig({
    BUNDLEKIT_RPC_URL: nodeUrl,
    BUNDLEKIT_RELAYER_KEYS: devnet.relayerKeys.join(","),
    BUNDLEKIT_PORT: "0",
    BUNDLEKIT_DATABASE: ":memory:",
  });
  const config = {
    ...base,
    ...overrides,
    bundler: mergeBundlerSettings(base.bundler, { bundling: { mode: "manual" } }, overrides.bundler),
    rpcUrl: nodeUrl,
  };
  const service: BundlerService = await startBundlerService(config, setup.logger);
  const chain = devnet.chain;
  const client = createPublicClient({ chain, transport: http(devnet.rpcUrl), pollingInterval: 50 }) as PublicClient;
  const funder = createWalletClient({ chain, transport: http(devnet.rpcUrl), account: privateKeyToAccount(devnet.accountKeys.at(-1)!) });
  let nextKey = 0;

  /** POST a raw body to the service. */
  async function post(body: string, headers: Record<string, string> = {}): Promise<HttpAnswer> {
    const response = await fetch(service.url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
    const text = await response.text();
    return { status: response.status, contentType: response.headers.get("content-type"), body: text ? JSON.parse(text) : undefined };
  }

  /** Call one method and return the whole response body. */
  // biome-ignore lint/suspicious/noExplicitAny: a test reads arbitrary JSON shapes
  async function call(method: string, params?: unknown[]): Promise<any> {
    return (await post(JSON.stringify({ jsonrpc: "2.0", id: 1, method, ...(params ? { params } : {}) }))).body;
  }

  /** Send `value` (default 1 ETH) to `to` from the devnet's funder, and wait until it is mined. */
  async function fund(to: Address, value = parseEther("1")) {
    await client.waitForTransactionReceipt({ hash: await funder.sendTransaction({ to, value, chain }) });
  }

  /** A funded counterfactual SimpleAccount with a fresh owner. */
  async function makeAccount(version: EntryPointVersion): Promise<SmartAccount> {
    const owner = privateKeyToAccount(devnet.accountKeys[nextKey++]!);
    const account = await toSimpleAccount({ client, owner, version });
    await fund(account.address);
    return account;
  }

  /**
   * A signed operation of `account` in its wire form (hex strings; v0.6 with `initCode`, v0.7+
   * unpacked), prepared through the service by viem's bundler client.
   */
  async function signedOperation(
    account: SmartAccount,
    call: { to: Address; value?: bigint; data?: Hex } = { to: account.address, value: 0n },
    fields: Record<string, unknown> = {},
  ): Promise<Record<string, unknown>> {
    const bundlerClient = createBundlerClient({ account, client, transport: http(service.url) });
    const prepared = await bundlerClient.prepareUserOperation({ calls: [call], ...fields } as never);
    const signature = await account.signUserOperation(prepared as never);
    return formatUserOperationRequest({ ...(prepared as object), signature } as never) as Record<string, unknown>;
  }

  return {
    devnet,
    proxy,
    config,
    service,
    client,
    post,
    call,
    fund,
    makeAccount,
    signedOperation,
    entryPoint: (version: EntryPointVersion) => devnet.deployments[version].entryPoint,
    async close() {
      proxy?.release();
      await service.close();
      await proxy?.close();
      await devnet.stop();
    },
  };
}

export type ServiceFixture = Awaited<ReturnType<typeof serviceFixture>>;
