import type { IncomingHttpHeaders } from "node:http";
import { isIP } from "node:net";

/**
 * Host names served when no `allowedHosts` is given. IP literals are always served: a DNS
 * rebinding attack needs a name the attacker controls, and a browser sends an IP literal only
 * when its page was loaded from that address.
 */
export const defaultAllowedHosts: readonly string[] = ["localhost"];

/** Media types a JSON-RPC body may be declared as (geth's list); any parameter, e.g. `charset`, is ignored. */
export const jsonContentTypes: readonly string[] = [
  "application/json",
  "application/json-rpc",
  "application/jsonrequest",
];

/**
 * Whether a body declared with this `content-type` may be executed. A browser sends
 * `text/plain`, form-encoded and multipart bodies cross-origin without asking (no CORS
 * preflight); a JSON type needs the preflight, which only the listed origins pass.
 */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  return jsonContentTypes.includes(header.split(";")[0]!.trim().toLowerCase());
}

/** The name in a `Host` header: lower case, without port, brackets or a trailing dot. */
function hostName(host: string): string {
  const text = host.trim().toLowerCase();
  if (text.startsWith("[")) return text.slice(1, text.indexOf("]"));
  const colon = text.lastIndexOf(":");
  return (colon >= 0 ? text.slice(0, colon) : text).replace(/\.$/, "");
}

/**
 * Whether the request's `Host` is served, as geth's `--http.vhosts`: a listed name, any IP
 * literal, or anything when `*` is listed. A page on an attacker's domain that the attacker
 * re-points at 127.0.0.1 (DNS rebinding) still sends its own domain as the host, and is refused.
 */
export function isAllowedHost(host: string | undefined, allowed: readonly string[]): boolean {
  if (host === undefined || allowed.includes("*")) return true;
  const name = hostName(host);
  return isIP(name) !== 0 || allowed.includes(name);
}

/** Whether a browser page of `origin` may call the endpoint: it is listed, or `*` is. */
export const isAllowedOrigin = (origin: string, allowed: readonly string[]) =>
  allowed.includes("*") || allowed.includes(origin.toLowerCase());

/** Why a browser-facing check refuses the request (HTTP status and message), or undefined when it passes. */
export interface Refusal {
  status: number;
  message: string;
}

/**
 * The Host and Origin checks every JSON-RPC request and WebSocket upgrade passes. A request
 * without `Origin` (a server, a script, a wallet backend) passes the origin check; a browser's
 * passes only when its origin is listed.
 */
export function refuseBrowser(
  headers: IncomingHttpHeaders,
  allowedHosts: readonly string[],
  allowedOrigins: readonly string[],
): Refusal | undefined {
  if (!isAllowedHost(headers.host, allowedHosts))
    return {
      status: 403,
      message: `host "${hostName(headers.host!).slice(0, 100)}" is not served here; the operator can list it in allowedHosts`,
    };
  const origin = headers.origin;
  if (origin !== undefined && !isAllowedOrigin(origin, allowedOrigins))
    return {
      status: 403,
      message: `requests from web pages of origin "${origin.slice(0, 100)}" are not allowed; the operator can list it in allowedOrigins`,
    };
  return undefined;
}

/**
 * CORS headers for an answer to an allowed browser origin: none without `Origin` (or with CORS
 * off), so a browser cannot read the answer.
 */
export function corsHeaders(
  origin: string | undefined,
  allowedOrigins: readonly string[],
): Record<string, string> {
  if (origin === undefined || !isAllowedOrigin(origin, allowedOrigins)) return {};
  return allowedOrigins.includes("*")
    ? { "access-control-allow-origin": "*" }
    : { "access-control-allow-origin": origin, vary: "origin" };
}

/** The answer headers to a CORS preflight (`OPTIONS` with `Origin`) from an allowed origin. */
export function preflightHeaders(
  headers: IncomingHttpHeaders,
  allowedOrigins: readonly string[],
): Record<string, string> {
  const requested = headers["access-control-request-headers"];
  return {
    ...corsHeaders(headers.origin, allowedOrigins),
    "access-control-allow-methods": "POST",
    // Any header the page asks for (e.g. `x-api-key`): the origin is trusted, and only names pass.
    "access-control-allow-headers":
      requested && /^[\w\s,-]+$/.test(requested) ? requested : "content-type",
    "access-control-max-age": "600",
    vary: "origin, access-control-request-headers",
  };
}
