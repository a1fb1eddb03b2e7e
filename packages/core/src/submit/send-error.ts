/**
 * What a node's refusal of a bundle transaction means for the bundle:
 * - `nonce-too-low`: the nonce is used; a transaction of ours (or another) at it was mined;
 * - `already-known`: the node has this very transaction; nothing to do;
 * - `underpriced`: a replacement must raise its fees more;
 * - `insufficient-funds`: the relayer cannot pay; another relayer may;
 * - `gas-limit`: the transaction's gas limit exceeds the block's; the bundle must be smaller;
 * - `other`: anything else (the operations go back to the pool).
 */
export type SendErrorKind = "nonce-too-low" | "already-known" | "underpriced" | "insufficient-funds" | "gas-limit" | "other";

const patterns: [SendErrorKind, RegExp][] = [
  ["nonce-too-low", /nonce too low|nonce has already been used|invalid nonce|oldnonce/i],
  ["already-known", /already known|already imported|known transaction|alreadyknown/i],
  ["underpriced", /underpriced|fee too low|replacement transaction/i],
  ["insufficient-funds", /insufficient funds|insufficient balance|lack of funds/i],
  ["gas-limit", /gas limit|exceeds block gas|intrinsic gas too high|gas_limit > env\.block\.gas_limit|gas too high/i],
];

/** Classify a node's error for a sent transaction by its message (and its causes'). */
export function classifySendError(error: unknown): SendErrorKind {
  const text = messagesOf(error);
  return patterns.find(([, pattern]) => pattern.test(text))?.[0] ?? "other";
}

function messagesOf(error: unknown): string {
  const parts: string[] = [];
  for (let e = error as { message?: unknown; details?: unknown; cause?: unknown } | undefined; e && parts.length < 8; e = e.cause as typeof e) {
    if (typeof e.message === "string") parts.push(e.message);
    if (typeof e.details === "string") parts.push(e.details);
  }
  return parts.join("\n");
}

/** The node refused a bundle transaction; `kind` says what that means for the bundle. */
export class SendBundleError extends Error {
  override name = "SendBundleError";
  readonly kind: SendErrorKind;
  constructor(kind: SendErrorKind, cause: unknown) {
    super(`the node refused the bundle transaction (${kind}): ${String((cause as Error)?.message ?? cause).split("\n")[0]}`, { cause });
    this.kind = kind;
  }
}
