import { createHmac, timingSafeEqual } from "node:crypto";
import { ConfigError, readSettingFile } from "../config-values.ts";

/** How far a token's `iat` may be from the service's clock, in seconds (as the engine API's). */
export const builderJwtLeewaySeconds = 60;

/**
 * The builder API's shared secret from `file`: 32 bytes as 64 hex digits (`0x` optional,
 * surrounding white space ignored), as op-node, op-geth and the engine API keep theirs.
 * Throws `ConfigError` naming the file, never its content.
 */
export function readBuilderJwtSecret(file: string): Buffer {
  const hex = readSettingFile(file, "builder JWT secret file").trim().replace(/^0x/i, "");
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) {
    throw new ConfigError(
      `the builder JWT secret file ${file} must hold 32 bytes as 64 hex digits`,
    );
  }
  return Buffer.from(hex, "hex");
}

const base64url = (bytes: Buffer) => bytes.toString("base64url");

/** An HS256 JWT `{ iat }` under `secret`: what a builder sends as `Authorization: Bearer …`. */
export function signBuilderJwt(secret: Uint8Array, iatSeconds: number): string {
  const header = base64url(Buffer.from(JSON.stringify({ alg: "HS256", typ: "JWT" })));
  const payload = base64url(Buffer.from(JSON.stringify({ iat: iatSeconds })));
  const signature = base64url(createHmac("sha256", secret).update(`${header}.${payload}`).digest());
  return `${header}.${payload}.${signature}`;
}

function json(part: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why the `Authorization` header does not authenticate a builder, or undefined when it does: a
 * `Bearer` HS256 JWT signed with `secret` whose `iat` is within ±60 s of `nowSeconds`. The
 * reason never quotes the token.
 */
export function builderJwtProblem(
  authorization: string | undefined,
  secret: Uint8Array,
  nowSeconds: number,
): string | undefined {
  if (!authorization) return "missing Authorization: Bearer <JWT>";
  const match = /^Bearer\s+([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]*)$/.exec(
    authorization.trim(),
  );
  if (!match) return "the Authorization header is not Bearer <JWT>";
  const [headerPart, payloadPart, signaturePart] = [match[1]!, match[2]!, match[3]!];
  const header = json(headerPart);
  if (header?.alg !== "HS256") return "the JWT must be signed with HS256";
  const expected = createHmac("sha256", secret).update(`${headerPart}.${payloadPart}`).digest();
  const given = Buffer.from(signaturePart, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return "the JWT signature is invalid";
  const iat = json(payloadPart)?.iat;
  if (typeof iat !== "number" || !Number.isFinite(iat)) return "the JWT has no iat claim";
  if (Math.abs(nowSeconds - iat) > builderJwtLeewaySeconds)
    return `the JWT's iat is more than ${builderJwtLeewaySeconds} s from the service's clock`;
  return undefined;
}
