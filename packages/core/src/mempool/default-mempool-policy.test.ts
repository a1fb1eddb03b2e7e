import { describe, expect, it } from "vitest";
import { BundlerError, type DomainError } from "../errors/errors.ts";
import { type RpcError, RpcErrorCode, toRpcError } from "../rpc/rpc-errors.ts";
import type { AdmissionRequest, BundleLimits } from "../ports/mempool-policy.ts";
import type { MempoolEntry, UserOperationStatus } from "../ports/mempool-store.ts";
import { fixtureEntry } from "../../../testing/src/index.ts";
import { createDefaultMempoolPolicy } from "./default-mempool-policy.ts";

/** A pooled operation of fixture sender `sender` with `nonce`, in `status`. */
async function pooled(options: { sender?: number; nonce?: bigint; status?: UserOperationStatus; priority?: bigint; receivedAt?: number } = {}): Promise<MempoolEntry> {
  const entry = await fixtureEntry({ sender: options.sender ?? 1, nonce: options.nonce ?? 0n, receivedAt: options.receivedAt });
  if (options.priority !== undefined) entry.userOperation.maxPriorityFeePerGas = options.priority;
  return { ...entry, status: options.status ?? "pending", updatedAt: entry.receivedAt };
}

async function request(nonce: bigint, senderOperations: MempoolEntry[], options: { feeBump?: bigint; senderStaked?: boolean } = {}): Promise<AdmissionRequest> {
  return {
    entry: await fixtureEntry({ sender: 1, nonce, feeBump: options.feeBump ?? 0n }),
    senderOperations,
    senderStaked: options.senderStaked ?? false,
  };
}

/** Bundle limits: by default roomy enough for everything, each operation 1 gas. */
function limits(overrides: Partial<BundleLimits> = {}): BundleLimits {
  return { gasBudget: 1_000_000n, maxOperations: 100, gasOf: () => 1n, block: { number: 1n, baseFeePerGas: 1n, timestamp: 1n }, ...overrides };
}

/** What the policy's refusal answers on the wire. */
function refusal(admit: () => unknown): RpcError<Record<string, unknown>> {
  try {
    admit();
  } catch (error) {
    expect(error).toBeInstanceOf(BundlerError);
    return toRpcError(error as DomainError);
  }
  throw new Error("admitted");
}

describe("default mempool policy (ERC-4337 / ERC-7562)", () => {
  const policy = createDefaultMempoolPolicy();

  it("admits a new nonce, replacing nothing", async () => {
    expect(policy.admit(await request(1n, [await pooled({ nonce: 0n })]))).toEqual({ replaces: undefined });
  });

  it("replaces a pending operation of the same nonce when both fees rise by 10%", async () => {
    const old = await pooled({ nonce: 3n });
    const fees = old.userOperation;
    const replacement = await request(3n, [old]);
    replacement.entry.userOperation.maxFeePerGas = (fees.maxFeePerGas * 110n) / 100n;
    replacement.entry.userOperation.maxPriorityFeePerGas = (fees.maxPriorityFeePerGas * 110n) / 100n;
    expect(policy.admit(replacement)).toEqual({ replaces: old });
  });

  it.each([
    ["maxFeePerGas", 109n, 110n],
    ["maxPriorityFeePerGas", 110n, 109n],
  ])("refuses a replacement whose %s rose by less than 10%%", async (_fee, maxFeeBump, priorityBump) => {
    const old = await pooled({ nonce: 3n });
    const replacement = await request(3n, [old]);
    replacement.entry.userOperation.maxFeePerGas = (old.userOperation.maxFeePerGas * maxFeeBump) / 100n;
    replacement.entry.userOperation.maxPriorityFeePerGas = (old.userOperation.maxPriorityFeePerGas * priorityBump) / 100n;
    const error = refusal(() => policy.admit(replacement));
    expect(error.code).toBe(RpcErrorCode.invalidParams);
    expect(error.message).toMatch(/replacement underpriced/);
    expect(error.data).toEqual({ replacing: old.userOpHash });
  });

  it.each<UserOperationStatus>(["bundling", "submitted"])("refuses to replace an operation that is %s, whatever the fees", async (status) => {
    const old = await pooled({ nonce: 3n, status });
    const replacement = await request(3n, [old]);
    replacement.entry.userOperation.maxFeePerGas = old.userOperation.maxFeePerGas * 2n;
    replacement.entry.userOperation.maxPriorityFeePerGas = old.userOperation.maxPriorityFeePerGas * 2n;
    const error = refusal(() => policy.admit(replacement));
    expect(error.message).toMatch(/cannot be replaced/);
  });

  it("lets an unstaked sender hold 4 operations and refuses a 5th with -32504", async () => {
    const pool = await Promise.all([0n, 1n, 2n, 3n].map((nonce) => pooled({ nonce })));
    expect(policy.admit(await request(3n, pool.slice(0, 3))).replaces).toBeUndefined();
    const fifth = await request(4n, pool);
    const error = refusal(() => policy.admit(fifth));
    expect(error.code).toBe(RpcErrorCode.throttledOrBanned);
    expect(error.message).toMatch(/already has 4 operations in the mempool/);
  });

  it("takes the limit from its options, and does not count a staked sender's operations", async () => {
    const pool = await Promise.all([0n, 1n, 2n, 3n].map((nonce) => pooled({ nonce })));
    const fifth = await request(4n, pool);
    expect(policy.admit({ ...fifth, senderStaked: true }).replaces).toBeUndefined();
    expect(createDefaultMempoolPolicy({ sameSenderMempoolCount: 5 }).admit(fifth).replaces).toBeUndefined();
  });

  it("selects the highest priority fees first, the oldest first among equals, up to the limit", async () => {
    const [cheap, rich, richLater, middle] = await Promise.all([
      pooled({ sender: 1, priority: 1n, receivedAt: 1 }),
      pooled({ sender: 2, priority: 9n, receivedAt: 2 }),
      pooled({ sender: 3, priority: 9n, receivedAt: 3 }),
      pooled({ sender: 4, priority: 5n, receivedAt: 4 }),
    ]);
    // Passed out of order (later before earlier) so the tie-break is what orders them.
    expect(policy.select([cheap!, richLater!, rich!, middle!], limits({ maxOperations: 3 }))).toEqual([rich, richLater, middle]);
  });

  it("fills the gas budget in fee order, skipping an operation too large for what is left", async () => {
    const [big, small, other] = await Promise.all([
      pooled({ sender: 1, priority: 9n, receivedAt: 1 }),
      pooled({ sender: 2, priority: 8n, receivedAt: 2 }),
      pooled({ sender: 3, priority: 7n, receivedAt: 3 }),
    ]);
    const gas = new Map([
      [big!.userOpHash, 600n],
      [small!.userOpHash, 300n],
      [other!.userOpHash, 500n],
    ]);
    const chosen = policy.select([big!, small!, other!], limits({ gasBudget: 1_000n, gasOf: (e) => gas.get(e.userOpHash)! }));
    expect(chosen).toEqual([big, small]);
  });
});
