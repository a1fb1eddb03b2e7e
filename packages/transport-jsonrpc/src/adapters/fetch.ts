import type { IncomingHttpHeaders } from "node:http";
import { RpcErrorCode } from "@bundlekit/core";
import { createHttpEndpoint, type JsonRpcHttpOptions, type RequestBody } from "../http-endpoint.ts";
import { jsonAnswer, rpcError } from "../respond.ts";

/**
 * The JSON-RPC endpoint as a fetch handler: every request gets a `Response`, a JSON 404 for a
 * path that is not the endpoint's (nor its health probe's or scrape's).
 */
export type JsonRpcFetchHandler = (request: Request) => Promise<Response>;

/** Read the body up to `limit` bytes. */
async function readBody(request: Request, limit: number): Promise<RequestBody> {
  if (request.bodyUsed) return "not kept";
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > limit) {
    await request.body?.cancel();
    return { overLimit: limit };
  }
  if (!request.body) return { bytes: new Uint8Array() };
  const chunks: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of request.body) {
    length += chunk.length;
    if (length > limit) return { overLimit: limit }; // leaving the loop cancels the stream
    chunks.push(chunk);
  }
  return { bytes: Buffer.concat(chunks) };
}

/** The headers as a Node request has them; `Host` from the URL when the runtime left it out. */
function headersOf(request: Request): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = Object.fromEntries(request.headers);
  headers.host ??= new URL(request.url).host;
  return headers;
}

const toResponse = (answer: { status: number; headers: Record<string, string>; body?: string }) =>
  new Response(answer.body ?? null, { status: answer.status, headers: answer.headers });

/**
 * The JSON-RPC endpoint for fetch-based servers (Hono, Bun, Deno, workers): the same envelope,
 * body limit, content-type, `Host` and `Origin` checks, health probe and metrics as the Node
 * listener. Paths are matched against the request's full URL: mount it so the URL reaches it
 * unchanged (Hono: `app.all("/bundler/*", (c) => rpc(c.req.raw))`). It sees no connection, so
 * the per-connection limits (`maxInFlightRequests`, `maxUnsentBytes`) are the server's to keep;
 * WebSocket is the server's too (see `createJsonRpcUpgradeHandler`).
 */
export function createJsonRpcFetchHandler(options: JsonRpcHttpOptions): JsonRpcFetchHandler {
  const endpoint = createHttpEndpoint(options);
  const notFound = jsonAnswer(
    404,
    rpcError(
      RpcErrorCode.invalidRequest,
      `no JSON-RPC endpoint here; POST to ${endpoint.paths[0]}`,
    ),
  );
  return async (request) => {
    const { pathname, search } = new URL(request.url);
    const url = pathname + search;
    const headers = headersOf(request);
    const screened = await endpoint.screen({ method: request.method, url, headers });
    if (screened === undefined) return toResponse(notFound);
    if (!("call" in screened)) return toResponse(screened);
    const body = await readBody(request, endpoint.maxBodyBytes);
    return toResponse(await endpoint.call(body, { url, headers }, screened.call));
  };
}
