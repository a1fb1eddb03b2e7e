import { redactUrls } from "./redact-urls.ts";

/** What a secret becomes in redacted text. */
export const REDACTED = "[redacted]";

/**
 * Hides secrets in what leaves a service: log lines, error messages, JSON-RPC errors. Every URL
 * is cut to scheme, host and port (`redactUrls`), and every known secret (a private key, a
 * password, an API key) is replaced by `[redacted]` wherever it appears.
 */
export interface Redactor {
  /** `text` with URLs cut and known secrets replaced. */
  text(text: string): string;
  /**
   * A copy of `value` with every string in it redacted, through arrays and objects; an `Error`
   * becomes `{ name, message, stack, cause }`, redacted the same way; a bigint equal to a secret
   * is hidden.
   */
  value(value: unknown): unknown;
  /**
   * `error` itself, redacted in place: its message, stack, every string property (viem's errors
   * repeat the URL in `details`, `metaMessages`, `url`) and its causes. For errors thrown to a caller.
   */
  error<E>(error: E): E;
}

/** Secrets shorter than this are not looked for in text: they would hide ordinary words and numbers. */
const MIN_SECRET_LENGTH = 4;

/**
 * A `Redactor` for these secrets. A hex secret (`0x…`, such as a private key) is found with or
 * without its `0x`, in any letter case, and as a decimal number; any other secret as written and
 * URL-encoded. With no secrets it still cuts every URL.
 */
export function createRedactor(secrets: Iterable<string | undefined> = []): Redactor {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (!secret) continue;
    if (/^0x[0-9a-f]+$/i.test(secret)) {
      forms.add(secret.slice(2));
      if (BigInt(secret) >= 2n ** 64n) forms.add(BigInt(secret).toString());
    } else {
      forms.add(secret);
      forms.add(encodeURIComponent(secret));
    }
  }
  const sorted = [...forms]
    .filter((form) => form.length >= MIN_SECRET_LENGTH)
    .sort((a, b) => b.length - a.length);
  const pattern =
    sorted.length > 0 ? new RegExp(sorted.map(escapeRegExp).join("|"), "gi") : undefined;
  const text = (input: string) =>
    pattern ? redactUrls(input).replace(pattern, REDACTED) : redactUrls(input);

  /** `ancestors`: the objects being copied around this one, so a cycle ends (a shared object is copied each time). */
  function value(input: unknown, ancestors: Set<object>): unknown {
    if (typeof input === "string") return text(input);
    if (typeof input === "bigint")
      return text(input.toString()) === input.toString() ? input : REDACTED;
    if (typeof input !== "object" || input === null) return input;
    // Values that print as themselves (a date as its time, bytes as bytes) are kept as they are.
    if (input instanceof Date || ArrayBuffer.isView(input)) return input;
    if (ancestors.has(input)) return "[circular]";
    ancestors.add(input);
    try {
      if (input instanceof Error) {
        const { name, message, stack, cause } = input;
        const fields = {
          name,
          message,
          ...(stack ? { stack } : {}),
          ...(cause !== undefined ? { cause } : {}),
        };
        return value(fields, ancestors);
      }
      if (Array.isArray(input)) return input.map((item) => value(item, ancestors));
      return Object.fromEntries(
        Object.entries(input).map(([key, item]) => [key, value(item, ancestors)]),
      );
    } finally {
      ancestors.delete(input);
    }
  }

  function error<E>(input: E, seen = new WeakSet<object>()): E {
    if (typeof input !== "object" || input === null || seen.has(input)) return input;
    seen.add(input);
    const target = input as Record<string, unknown>;
    for (const key of new Set(["message", "stack", "cause", ...Object.keys(target)])) {
      const property = target[key];
      const redacted =
        key === "cause"
          ? error(property, seen)
          : typeof property === "string"
            ? text(property)
            : Array.isArray(property)
              ? property.map((item) => (typeof item === "string" ? text(item) : item))
              : property;
      if (redacted === property) continue;
      try {
        target[key] = redacted;
      } catch {
        // A read-only property stays as it is.
      }
    }
    return input;
  }

  return { text, value: (input) => value(input, new Set()), error: (input) => error(input) };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
