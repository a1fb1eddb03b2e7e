/**
 * A URL of any scheme with an authority (`https://`, `wss://`, `postgres://`, `redis://`…), up to
 * the next space or quote; punctuation that ends a sentence (`.`, `,`, `:`, `)`…) is left outside.
 */
const urlPattern = /\b([a-z][a-z0-9+.-]*):\/\/(?:[^\s"'<>`]*[^\s"'<>`.,:;!?)\]}])?/gi;

/** A host with an optional port: a name, an IPv4 address or a bracketed IPv6 address. */
const hostPattern = /^(\[[0-9a-f:.]*\]|[a-z0-9._~%-]*)(:\d*)?$/i;

/**
 * `url` as it may be printed: scheme, host and port only. Credentials, path and query are cut
 * (`https://eth-mainnet.g.alchemy.com/v2/KEY` → `https://eth-mainnet.g.alchemy.com/…`), because
 * hosted node providers put API keys there. A URL whose host cannot be told apart from a password
 * (`postgres://user:pa/ss@db`) keeps only its scheme.
 */
export function redactUrl(url: string): string {
  const match = /^([a-z][a-z0-9+.-]*):\/\/(.*)$/is.exec(url);
  if (!match) return url;
  const scheme = match[1]!;
  const rest = match[2]!;
  const end = rest.search(/[/?#]/);
  const authority = end < 0 ? rest : rest.slice(0, end);
  const host = authority.slice(authority.lastIndexOf("@") + 1);
  const more = end >= 0 && end < rest.length - 1 ? "/…" : "";
  if (
    !hostPattern.test(host) ||
    (!authority.includes("@") && rest.slice(authority.length).includes("@"))
  )
    return `${scheme}://…`;
  return `${scheme}://${host}${more}`;
}

/**
 * `text` with every URL in it redacted as `redactUrl` does. `file://` URLs (stack frames) are
 * kept: they name source files, never secrets.
 */
export function redactUrls(text: string): string {
  return text.replace(urlPattern, (url, scheme: string) =>
    scheme.toLowerCase() === "file" ? url : redactUrl(url),
  );
}

/**
 * The parts of `url` that may be secret, to hide wherever they appear without the URL around
 * them: its password, query values, and path segments that look like keys (16 characters or
 * more, or 8 or more with a digit), as hosted node providers put them (`/v2/<key>`, `/v3/<key>`).
 */
export function urlSecrets(url: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [];
  }
  const looksLikeKey = (part: string) => part.length >= 16 || (part.length >= 8 && /\d/.test(part));
  return [
    ...(parsed.password ? [parsed.password, decode(parsed.password)] : []),
    ...parsed.pathname.split("/").filter(looksLikeKey),
    ...[...parsed.searchParams.values()].filter((value) => value.length > 0),
  ];
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
