/** The entity an EntryPoint failure code blames, as ERC-4337 groups the codes. */
export type FailureEntity = "factory" | "account" | "paymaster";

/** An EntryPoint `FailedOp` reason, parsed: `"AA25 invalid account nonce"` → `{ code: 25, entity: "account" }`. */
export interface FailureReason {
  /** The two digits after `AA`; undefined when the reason carries no code. */
  code: number | undefined;
  /** AA1x the factory, AA2x the account, AA3x the paymaster; undefined for other codes. */
  entity: FailureEntity | undefined;
  /** The reason as the EntryPoint gave it. */
  text: string;
}

const entities: Record<string, FailureEntity> = { "1": "factory", "2": "account", "3": "paymaster" };

/** Parse an EntryPoint failure reason once, so callers compare codes instead of matching text. */
export function parseFailureReason(text: string): FailureReason {
  const match = /^AA(\d)(\d)/.exec(text);
  if (!match) return { code: undefined, entity: undefined, text };
  return { code: Number(match[1]! + match[2]!), entity: entities[match[1]!], text };
}

/**
 * The EntryPoint's own texts (v0.6 to v0.8, identical in each) for the failures the engine
 * reports in its name: a check it makes on the EntryPoint's result, or ahead of it, that
 * `handleOps` would refuse with this reason. Messages start with the text, any detail after ": ".
 */
export const entryPointReasons = {
  10: "AA10 sender already constructed",
  22: "AA22 expired or not due",
  24: "AA24 signature error",
  31: "AA31 paymaster deposit too low",
  32: "AA32 paymaster expired or not due",
  34: "AA34 signature error",
} as const;
