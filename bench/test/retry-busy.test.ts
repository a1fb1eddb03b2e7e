import { InternalRpcError, LimitExceededRpcError, RpcRequestError } from "viem";
import { describe, expect, it } from "vitest";
import { busyRetryAfterMs, retryingBusy } from "../retry-busy.ts";

/** The error viem's http transport throws for a JSON-RPC error answer, with the HTTP status and headers. */
function viemError(code: number, headers?: Record<string, string>) {
  const answer = new RpcRequestError({
    body: { method: "eth_sendUserOperation" },
    error: { code, message: "the bundler is busy" },
    headers: headers && new Headers(headers),
    status: headers ? 429 : undefined,
    url: "http://127.0.0.1/",
  });
  return code === -32005 ? new LimitExceededRpcError(answer) : new InternalRpcError(answer);
}

describe("retrying a busy answer as a wallet does", () => {
  it("waits the answer's Retry-After, 1 s without one, and never retries another error", () => {
    expect(busyRetryAfterMs(viemError(-32005, { "retry-after": "2" }))).toBe(2_000);
    expect(busyRetryAfterMs(viemError(-32005))).toBe(1_000);
    expect(busyRetryAfterMs(viemError(-32603))).toBeUndefined();
    expect(busyRetryAfterMs(new Error("fetch failed"))).toBeUndefined();
  });

  it("sends again after each busy refusal, counting them, and gives up on the first other error", async () => {
    const answers = [
      viemError(-32005, { "retry-after": "0" }),
      viemError(-32005, { "retry-after": "0" }),
    ];
    const refusals: number[] = [];
    const result = await retryingBusy(
      async () => {
        const next = answers.shift();
        if (next) throw next;
        return "0xhash";
      },
      true,
      (ms) => refusals.push(ms),
    );
    expect(result).toBe("0xhash");
    expect(refusals).toHaveLength(2);
    await expect(
      retryingBusy(
        () => Promise.reject(viemError(-32603)),
        true,
        () => {},
      ),
    ).rejects.toBeInstanceOf(InternalRpcError);
    // Without retrying, the refusal is counted and passed on.
    await expect(
      retryingBusy(
        () => Promise.reject(viemError(-32005)),
        false,
        (ms) => refusals.push(ms),
      ),
    ).rejects.toBeInstanceOf(LimitExceededRpcError);
    expect(refusals).toHaveLength(3);
  });
});
