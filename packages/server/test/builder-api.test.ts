import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EntryPointVersion } from "@bundlekit/devnet";
import { createWalletClient, type Hash, type Hex, http, keccak256, parseEther, parseTransaction, toHex } from "viem";
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { signBuilderJwt } from "../src/builder-api/builder-jwt.ts";
import type { BuilderProposalJson } from "../src/builder-api/builder-methods.ts";
import { loadConfig } from "../src/config.ts";
import { type ServiceFixture, serviceFixture } from "./service-fixture.ts";

const secret = randomBytes(32);
const secretHex = secret.toString("hex");
const now = () => Math.floor(Date.now() / 1000);

/** The service reports the operation included, successfully, by `transactionHash`. */
async function expectIncluded(fixture: ServiceFixture, userOpHash: Hash, transactionHash: Hash) {
  const receipt = async () =>
    (await fixture.call("eth_getUserOperationReceipt", [userOpHash])).result;
  await expect
    .poll(async () => (await receipt())?.receipt?.transactionHash)
    .toBe(transactionHash);
  expect((await receipt()).success).toBe(true);
}

/** What a builder knows of the next block, as a `builder_proposeBundle` request, with `extra` fields. */
async function nextBlockRequest(fixture: ServiceFixture, extra: Record<string, unknown> = {}) {
  const latest = await fixture.client.getBlock({ blockTag: "latest" });
  return {
    blockNumber: `0x${(latest.number + 1n).toString(16)}`,
    timestamp: `0x${(latest.timestamp + 1n).toString(16)}`,
    baseFee: `0x${(latest.baseFeePerGas ?? 0n).toString(16)}`,
    gasBudget: `0x${(15_000_000).toString(16)}`,
    ...extra,
  };
}

/** The proposal's transaction signed with the builder's own key at its next nonce, and sent: its hash. */
async function signAndSend(
  fixture: ServiceFixture,
  builder: PrivateKeyAccount,
  proposal: BuilderProposalJson,
): Promise<Hash> {
  const signed = await builder.signTransaction({
    chainId: fixture.devnet.chainId,
    type: "eip1559",
    to: proposal.to,
    data: proposal.data,
    gas: BigInt(proposal.gas),
    maxFeePerGas: BigInt(proposal.maxFeePerGas),
    maxPriorityFeePerGas: BigInt(proposal.maxPriorityFeePerGas),
    nonce: await fixture.client.getTransactionCount({
      address: builder.address,
      blockTag: "pending",
    }),
    ...(proposal.accessList ? { accessList: proposal.accessList } : {}),
  });
  return fixture.client.sendRawTransaction({ serializedTransaction: signed });
}

/**
 * The builder API on its own listener, through the stand-alone service on the devnet: a builder
 * outside the process proposes, signs with its own key, sends and commits; releases; and is
 * refused without a valid JWT.
 */
describe("builder API", () => {
  let fixture: ServiceFixture;
  let directory: string;
  let builderUrl: string;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), "bundlekit-builder-"));
    const file = join(directory, "jwt.hex");
    writeFileSync(file, `0x${secretHex}\n`);
    const { builder } = loadConfig({
      BUNDLEKIT_BUILDER_PORT: "0",
      BUNDLEKIT_BUILDER_JWT_SECRET_FILE: file,
    });
    fixture = await serviceFixture({ builder }, {});
    builderUrl = fixture.service.builderUrl!;
  });
  afterAll(async () => {
    await fixture?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  /** POST to the builder API with `authorization` (default a fresh JWT under the secret). */
  async function builderPost(
    body: unknown,
    authorization: string | null = `Bearer ${signBuilderJwt(secret, now())}`,
  ) {
    const response = await fetch(builderUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(authorization === null ? {} : { authorization }),
      },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, text, body: JSON.parse(text) };
  }
  // biome-ignore lint/suspicious/noExplicitAny: a test reads arbitrary JSON shapes
  async function builderCall(method: string, params: unknown[]): Promise<any> {
    return (await builderPost({ jsonrpc: "2.0", id: 1, method, params })).body;
  }

  /** A sent operation of a fresh account on EntryPoint `version`; each test has an EntryPoint of its own, so none sees another's. */
  async function sendOperation(version: EntryPointVersion): Promise<Hash> {
    const account = await fixture.makeAccount(version);
    const op = await fixture.signedOperation(account);
    const sent = await fixture.call("eth_sendUserOperation", [op, fixture.entryPoint(version)]);
    expect(sent.error).toBeUndefined();
    return sent.result;
  }

  it("proposes a bundle the builder signs with its own key and sends, commits it, and the operation is included in that transaction", async () => {
    const userOpHash = await sendOperation("0.7");
    const builder = privateKeyToAccount(generatePrivateKey());
    await fixture.fund(builder.address);
    const proposed = await builderCall("builder_proposeBundle", [
      await nextBlockRequest(fixture, {
        from: builder.address,
        entryPoint: fixture.entryPoint("0.7"),
      }),
    ]);
    expect(proposed.error).toBeUndefined();
    const proposal = proposed.result;
    expect(proposal.userOpHashes).toEqual([userOpHash]);
    expect(proposal.entryPoint).toBe(fixture.entryPoint("0.7"));
    expect(proposal.to).toBe(fixture.entryPoint("0.7"));
    expect(proposal.from).toBe(builder.address);
    expect(proposal.signedTransaction).toBeNull();
    expect(proposal.transactionHash).toBeNull();
    expect(proposal.gas).toMatch(/^0x[0-9a-f]+$/);

    const transactionHash = await signAndSend(fixture, builder, proposal);
    const committed = await builderCall("builder_commitBundle", [proposal.id, transactionHash]);
    expect(committed).toEqual({ jsonrpc: "2.0", id: 1, result: true });

    const receipt = await fixture.client.waitForTransactionReceipt({ hash: transactionHash });
    expect(receipt.status).toBe("success");
    await expectIncluded(fixture, userOpHash, transactionHash);
    // A proposal is committed once.
    const again = await builderCall("builder_commitBundle", [proposal.id, transactionHash]);
    expect(again.error.code).toBe(-32602);
    expect(again.error.message).toContain(`no bundle proposal ${proposal.id} is open`);
  });

  /**
   * A proposal signed by one of the service's relayers, on EntryPoint `version`. A relayer is
   * held until the transaction it signed for another test is followed to its receipt: while all
   * are, the service answers -32005 and the builder asks again, as docs/sequencer.md says.
   */
  function signedProposal(version: EntryPointVersion): Promise<BuilderProposalJson & { signedTransaction: Hex; transactionHash: Hash }> {
    return vi.waitFor(
      async () => {
        const answer = await builderCall("builder_proposeBundle", [await nextBlockRequest(fixture, { sign: true, entryPoint: fixture.entryPoint(version) })]);
        if (answer.error?.code === -32005) throw new Error(answer.error.message);
        return answer.result;
      },
      { timeout: 30_000, interval: 50 },
    );
  }

  it("signs with the service's relayer when asked, and the commit needs no hash", async () => {
    const userOpHash = await sendOperation("0.8");
    const proposal = await signedProposal("0.8");
    expect(proposal.userOpHashes).toEqual([userOpHash]);
    expect(fixture.service.bundler.relayers).toContain(proposal.from);
    expect(proposal.transactionHash).toBe(keccak256(proposal.signedTransaction as Hex));
    const transactionHash = await fixture.client.sendRawTransaction({
      serializedTransaction: proposal.signedTransaction,
    });
    expect(transactionHash).toBe(proposal.transactionHash);
    expect((await builderCall("builder_commitBundle", [proposal.id])).result).toBe(true);
    expect((await fixture.client.waitForTransactionReceipt({ hash: transactionHash })).status).toBe(
      "success",
    );
    await expect
      .poll(
        async () =>
          (await fixture.call("eth_getUserOperationReceipt", [userOpHash])).result?.success,
      )
      .toBe(true);
  });

  it("keeps a relayer that signed an open proposal from every other bundle: with both held, a third signed proposal waits, and none shares a nonce", async () => {
    const version = "0.9";
    const request = async () => builderCall("builder_proposeBundle", [await nextBlockRequest(fixture, { sign: true, entryPoint: fixture.entryPoint(version) })]);
    await sendOperation(version);
    const first = await signedProposal(version);
    await sendOperation(version);
    const second = await signedProposal(version);
    await sendOperation(version);
    // The service's two relayers each signed a transaction the node has not seen yet.
    const busy = await request();
    expect(busy.error?.code, busy.result && `signed by ${busy.result.from}`).toBe(-32005);
    // Sent and committed, each is followed to its receipt, and its relayer is free again.
    for (const proposal of [first, second]) {
      await fixture.client.sendRawTransaction({ serializedTransaction: proposal.signedTransaction });
      expect((await builderCall("builder_commitBundle", [proposal.id])).result).toBe(true);
    }
    const third = await signedProposal(version);
    await fixture.client.sendRawTransaction({ serializedTransaction: third.signedTransaction });
    expect((await builderCall("builder_commitBundle", [third.id])).result).toBe(true);
    for (const proposal of [first, second, third]) {
      expect((await fixture.client.waitForTransactionReceipt({ hash: proposal.transactionHash })).status).toBe("success");
    }
    const signedBy = (proposal: typeof first) => `${proposal.from}:${parseTransaction(proposal.signedTransaction).nonce}`;
    expect(new Set([first, second, third].map(signedBy)).size).toBe(3);
  });

  it("releases a proposal: its operation goes back to the pool and is proposed again", async () => {
    const userOpHash = await sendOperation("0.6");
    const builder = {
      address: privateKeyToAccount(generatePrivateKey()).address,
      entryPoint: fixture.entryPoint("0.6"),
    };
    const first = (
      await builderCall("builder_proposeBundle", [
        await nextBlockRequest(fixture, { from: builder.address, entryPoint: builder.entryPoint }),
      ])
    ).result;
    expect(first.userOpHashes).toEqual([userOpHash]);
    // Claimed: a second builder gets nothing while the proposal is open.
    expect(
      (
        await builderCall("builder_proposeBundle", [
          await nextBlockRequest(fixture, {
            from: builder.address,
            entryPoint: builder.entryPoint,
          }),
        ])
      ).result,
    ).toBeNull();
    expect((await builderCall("builder_releaseBundle", [first.id])).result).toBe(true);
    const lookup = (await fixture.call("eth_getUserOperationByHash", [userOpHash])).result;
    expect(lookup.transactionHash).toBeNull();
    const second = (
      await builderCall("builder_proposeBundle", [
        await nextBlockRequest(fixture, { from: builder.address, entryPoint: builder.entryPoint }),
      ])
    ).result;
    expect(second.userOpHashes).toEqual([userOpHash]);
    expect(second.id).not.toBe(first.id);
    expect((await builderCall("builder_releaseBundle", [second.id])).result).toBe(true);
    expect((await builderCall("builder_releaseBundle", [second.id])).error.code).toBe(-32602);
  });

  it.each([
    ["no Authorization header", null, "missing Authorization"],
    [
      "a token signed with another secret",
      `Bearer ${signBuilderJwt(randomBytes(32), now())}`,
      "signature is invalid",
    ],
    [
      "a token issued two minutes ago",
      `Bearer ${signBuilderJwt(secret, now() - 120)}`,
      "iat is more than 60 s",
    ],
    [
      "a token issued two minutes ahead",
      `Bearer ${signBuilderJwt(secret, now() + 120)}`,
      "iat is more than 60 s",
    ],
    [
      "a Basic header",
      `Basic ${Buffer.from(`builder:${secretHex}`).toString("base64")}`,
      "not Bearer",
    ],
  ])(
    "refuses %s with 401 and a JSON-RPC error, and never echoes the secret",
    async (_, authorization, reason) => {
      const answer = await builderPost(
        { jsonrpc: "2.0", id: 1, method: "builder_releaseBundle", params: ["x"] },
        authorization,
      );
      expect(answer.status).toBe(401);
      expect(answer.body.error.code).toBe(-32600);
      expect(answer.body.error.message).toContain(reason);
      expect(answer.text).not.toContain(secretHex);
    },
  );

  it("serves only the builder methods on its listener, and says what is wrong with a bad request", async () => {
    expect((await builderCall("eth_supportedEntryPoints", [])).error.code).toBe(-32601);
    const noFrom = await builderCall("builder_proposeBundle", [await nextBlockRequest(fixture)]);
    expect(noFrom.error.code).toBe(-32602);
    expect(noFrom.error.message).toContain("from");
    const unknownField = await builderCall("builder_proposeBundle", [
      await nextBlockRequest(fixture, {
        from: "0x0000000000000000000000000000000000000001",
        gasbudget: "0x1",
      }),
    ]);
    expect(unknownField.error.code).toBe(-32602);
    expect(unknownField.error.message).toContain("gasbudget");
    const badBlock = await builderCall("builder_proposeBundle", [
      {
        ...(await nextBlockRequest(fixture)),
        blockNumber: "latest",
        from: "0x0000000000000000000000000000000000000001",
      },
    ]);
    expect(badBlock.error.code).toBe(-32602);
    expect(badBlock.error.message).toContain("blockNumber");
    // The public endpoint does not serve the builder methods.
    expect((await fixture.call("builder_releaseBundle", ["x"])).error.code).toBe(-32601);
  });
});

/** Pull mode with no relayer key: the service starts, and the builder signs what it pulls. */
describe("builder API on a service without relayers", () => {
  let fixture: ServiceFixture;
  let directory: string;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), "bundlekit-builder-"));
    const file = join(directory, "jwt.hex");
    writeFileSync(file, secretHex);
    const { builder } = loadConfig({
      BUNDLEKIT_BUILDER_PORT: "0",
      BUNDLEKIT_BUILDER_JWT_SECRET_FILE: file,
    });
    fixture = await serviceFixture({
      builder,
      relayerKeys: [],
      bundler: { bundling: { mode: "pull" } },
    });
  });
  afterAll(async () => {
    await fixture?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  // biome-ignore lint/suspicious/noExplicitAny: a test reads arbitrary JSON shapes
  async function builderCall(method: string, params: unknown[]): Promise<any> {
    const response = await fetch(fixture.service.builderUrl!, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${signBuilderJwt(secret, now())}`,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    return response.json();
  }

  it("includes an operation the builder pulled, signed and committed, with no relayer of the service", async () => {
    expect(fixture.service.bundler.relayers).toEqual([]);
    expect(fixture.service.bundler.bundling.mode).toBe("pull");
    const account = await fixture.makeAccount("0.7");
    const userOpHash: Hash = (
      await fixture.call("eth_sendUserOperation", [
        await fixture.signedOperation(account),
        fixture.entryPoint("0.7"),
      ])
    ).result;
    const request = await nextBlockRequest(fixture);
    // The service holds no key to sign with.
    const refused = await builderCall("builder_proposeBundle", [{ ...request, sign: true }]);
    expect(refused.error.code).toBe(-32602);
    expect(refused.error.message).toContain("params[0].sign");

    const builder = privateKeyToAccount(generatePrivateKey());
    await fixture.fund(builder.address);
    const proposal = (
      await builderCall("builder_proposeBundle", [{ ...request, from: builder.address }])
    ).result;
    expect(proposal.userOpHashes).toEqual([userOpHash]);
    const transactionHash = await signAndSend(fixture, builder, proposal);
    expect((await builderCall("builder_commitBundle", [proposal.id, transactionHash])).result).toBe(
      true,
    );
    await expectIncluded(fixture, userOpHash, transactionHash);
  });

  it("simulates a proposal on the builder's state: an operation valid only with the builder's state override is proposed, and included after the builder's own transaction", async () => {
    const drained = async (version: "0.7" | "0.8") => {
      const account = await fixture.makeAccount(version);
      const userOpHash: Hash = (
        await fixture.call("eth_sendUserOperation", [
          await fixture.signedOperation(account),
          fixture.entryPoint(version),
        ])
      ).result;
      // After admission the account loses the ether its operation's prefund needs.
      await fixture.client.request({
        method: "anvil_setBalance" as never,
        params: [account.address, "0x0"] as never,
      });
      return { account, userOpHash };
    };
    const builder = privateKeyToAccount(generatePrivateKey());
    await fixture.fund(builder.address, parseEther("2"));
    // On the node's latest state such an operation fails handleOps (AA21) and is not proposed.
    const control = await drained("0.7");
    expect(
      (
        await builderCall("builder_proposeBundle", [
          await nextBlockRequest(fixture, {
            from: builder.address,
            entryPoint: fixture.entryPoint("0.7"),
          }),
        ])
      ).result,
    ).toBeNull();
    expect(
      (await fixture.call("eth_getUserOperationByHash", [control.userOpHash])).result,
    ).toBeNull();

    // The builder places a transaction paying the account 1 ETH before the bundle: its state says so.
    const { account, userOpHash } = await drained("0.8");
    const next = await nextBlockRequest(fixture, {
      from: builder.address,
      entryPoint: fixture.entryPoint("0.8"),
    });
    const proposal = (
      await builderCall("builder_proposeBundle", [
        {
          ...next,
          block: "pending",
          stateOverride: { [account.address]: { balance: toHex(parseEther("1")) } },
          blockOverride: { number: next.blockNumber, time: next.timestamp },
        },
      ])
    ).result;
    expect(proposal.userOpHashes).toEqual([userOpHash]);
    await fixture.client.request({ method: "evm_setAutomine" as never, params: [false] as never });
    try {
      const wallet = createWalletClient({
        account: builder,
        chain: fixture.devnet.chain,
        transport: http(fixture.devnet.rpcUrl),
      });
      const funding = await wallet.sendTransaction({
        to: account.address,
        value: parseEther("1"),
        chain: fixture.devnet.chain,
      });
      const transactionHash = await signAndSend(fixture, builder, proposal);
      expect(
        (await builderCall("builder_commitBundle", [proposal.id, transactionHash])).result,
      ).toBe(true);
      await fixture.client.request({ method: "evm_mine" as never });
      const block = await fixture.client.getBlock({ blockTag: "latest" });
      expect(block.transactions).toEqual([funding, transactionHash]);
      await expectIncluded(fixture, userOpHash, transactionHash);
    } finally {
      await fixture.client.request({ method: "evm_setAutomine" as never, params: [true] as never });
    }
  });

  it("refuses a malformed builder state, naming the field", async () => {
    const request = await nextBlockRequest(fixture, {
      from: "0x0000000000000000000000000000000000000001",
    });
    const badBlock = await builderCall("builder_proposeBundle", [{ ...request, block: "safe" }]);
    expect(badBlock.error).toMatchObject({
      code: -32602,
      message: 'invalid params[0].block: must be "latest" or "pending"',
    });
    const badOverride = await builderCall("builder_proposeBundle", [
      {
        ...request,
        stateOverride: { "0x0000000000000000000000000000000000000002": { balanse: "0x1" } },
      },
    ]);
    expect(badOverride.error.code).toBe(-32602);
    expect(badOverride.error.message).toContain("balanse");
    const badBlockOverride = await builderCall("builder_proposeBundle", [
      { ...request, blockOverride: { timestamp: "0x1" } },
    ]);
    expect(badBlockOverride.error).toMatchObject({
      code: -32602,
      message: expect.stringContaining("params[0].blockOverride.timestamp"),
    });
  });
});
