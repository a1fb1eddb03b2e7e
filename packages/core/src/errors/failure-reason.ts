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
