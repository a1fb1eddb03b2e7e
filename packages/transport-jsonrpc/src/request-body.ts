import type { IncomingMessage } from "node:http";
import type { RequestBody } from "./http-endpoint.ts";

/** A Node request, as a framework may have left it: Express keeps a body it parsed on `body`. */
export type NodeRequest = IncomingMessage & { body?: unknown; originalUrl?: string };

/** Read the stream up to `limit` bytes. */
function readStream(request: IncomingMessage, limit: number): Promise<RequestBody> {
  return new Promise((resolve, reject) => {
    const declared = Number(request.headers["content-length"]);
    if (Number.isFinite(declared) && declared > limit) {
      request.resume();
      resolve({ overLimit: limit });
      return;
    }
    const chunks: Buffer[] = [];
    let length = 0;
    request.on("data", (chunk: Buffer) => {
      length += chunk.length;
      if (length > limit) {
        request.removeAllListeners("data");
        request.resume();
        resolve({ overLimit: limit });
      } else {
        chunks.push(chunk);
      }
    });
    request.on("end", () => resolve({ bytes: Buffer.concat(chunks) }));
    request.on("error", reject);
  });
}

/**
 * The body of a request: read from its stream up to `limit` bytes, unless a framework read the
 * stream first (`express.json()`, `express.text()`, `express.raw()`): then what it kept on
 * `request.body` is used, never waited for (its `end` event is gone).
 */
export function requestBody(request: NodeRequest, limit: number): Promise<RequestBody> {
  if (!request.readableDidRead && !request.readableEnded) return readStream(request, limit);
  const { body } = request;
  if (typeof body === "string") return Promise.resolve({ bytes: Buffer.from(body, "utf8") });
  if (body instanceof Uint8Array) return Promise.resolve({ bytes: body });
  if (body === undefined) return Promise.resolve("not kept");
  const declared = Number(request.headers["content-length"]);
  const length = Number.isFinite(declared)
    ? declared
    : Buffer.byteLength(JSON.stringify(body) ?? "");
  return Promise.resolve({ parsed: body, length });
}
