import { createHash, timingSafeEqual } from "node:crypto";
import { refuse, type SponsorshipPolicy } from "./policy.ts";

/** One API key and the policy its callers get. */
export interface ApiKeyRoute {
  /** The secret a caller presents. */
  apiKey: string;
  policy: SponsorshipPolicy;
}

const digest = (text: string) => createHash("sha256").update(text, "utf8").digest();

/**
 * Sends each request to the policy of the API key it presents; a request with no key, or an
 * unknown one, is refused. Keys are compared in constant time: through their SHA-256 digests
 * (equal lengths), against every key, with no early exit, so the time taken tells nothing of
 * which key or how much of it matched.
 */
export function byApiKey(routes: readonly ApiKeyRoute[]): SponsorshipPolicy {
  const known = routes.map((route) => ({ digest: digest(route.apiKey), policy: route.policy }));
  return (request) => {
    if (request.apiKey === undefined || request.apiKey === "") {
      return refuse(
        "an API key is required: add ?apikey=<key> to the endpoint's URL, or send the x-api-key header",
        {
          cap: "apiKey",
        },
      );
    }
    const presented = digest(request.apiKey);
    let matched: SponsorshipPolicy | undefined;
    for (const route of known) {
      if (timingSafeEqual(route.digest, presented)) matched ??= route.policy;
    }
    return matched ? matched(request) : refuse("unknown API key", { cap: "apiKey" });
  };
}
