import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { JsonRpcResponse, RpcHandler } from "@bundlekit/core";

export interface JsonRpcHttpOptions {
  handler: RpcHandler;
  /** Path the JSON-RPC endpoint answers at, e.g. `/v1/31337`; a trailing `/` is accepted too. Default `/`. */
  basePath?: string;
  /** Largest request body accepted, in bytes. Default 1 MiB. */
  maxBodyBytes?: number;
}

/**
 * Handles one HTTP request if it is for the JSON-RPC endpoint (or `GET /health`) and resolves
 * true; resolves false, touching nothing, for any other path so a host server can route it.
 */
export type JsonRpcRequestListener = (request: IncomingMessage, response: ServerResponse) => Promise<boolean>;

const rpcError = (code: number, message: string): JsonRpcResponse => ({ jsonrpc: "2.0", id: null, error: { code, message } });

function send(response: ServerResponse, status: number, body: unknown) {
  const json = JSON.stringify(body);
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(json) });
  response.end(json);
}

/** Read the body up to `limit` bytes; undefined when it is larger. */
function readBody(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const declared = Number(request.headers["content-length"]);
    if (Number.isFinite(declared) && declared > limit) {
      request.resume();
      resolve(undefined);
      return;
    }
    const chunks: Buffer[] = [];
    let length = 0;
    request.on("data", (chunk: Buffer) => {
      length += chunk.length;
      if (length > limit) {
        request.removeAllListeners("data");
        request.resume();
        resolve(undefined);
      } else {
        chunks.push(chunk);
      }
    });
    request.on("end", () => resolve(Buffer.concat(chunks)));
    request.on("error", reject);
  });
}

/** The JSON-RPC endpoint as a Node request listener, to run alone or mount next to other routes. */
export function createJsonRpcRequestListener(options: JsonRpcHttpOptions): JsonRpcRequestListener {
  const basePath = (options.basePath ?? "/").replace(/\/+$/, "");
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const { handler } = options;

  return async (request, response) => {
    const path = (request.url ?? "/").split("?")[0]!.replace(/\/+$/, "");
    if (path === "/health" && request.method === "GET") {
      send(response, 200, { status: "ok" });
      return true;
    }
    if (path !== basePath) return false;
    if (request.method !== "POST") {
      response.setHeader("allow", "POST");
      send(response, 405, rpcError(-32600, `use POST for JSON-RPC at ${basePath || "/"}`));
      return true;
    }
    const body = await readBody(request, maxBodyBytes).catch(() => undefined);
    if (!body) {
      send(response, 413, rpcError(-32600, `request body exceeds the limit of ${maxBodyBytes} bytes`));
      return true;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString("utf8"));
    } catch (error) {
      send(response, 200, handler.parseError((error as Error).message));
      return true;
    }
    const answer = await handler.handle(parsed);
    if (answer === undefined) {
      response.writeHead(204).end();
    } else {
      send(response, 200, answer);
    }
    return true;
  };
}

export interface JsonRpcServer {
  /** e.g. `http://127.0.0.1:4337/v1/31337/` */
  url: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

/** Serve the JSON-RPC endpoint on its own HTTP server. Unknown paths get a JSON 404. */
export async function startJsonRpcServer(
  options: JsonRpcHttpOptions & { port?: number; host?: string },
): Promise<JsonRpcServer> {
  const listener = createJsonRpcRequestListener(options);
  const basePath = (options.basePath ?? "/").replace(/\/+$/, "");
  const server = createServer((request, response) => {
    listener(request, response)
      .then((handled) => {
        if (!handled) send(response, 404, rpcError(-32600, `no JSON-RPC endpoint here; POST to ${basePath}/`));
      })
      .catch(() => {
        if (!response.headersSent) send(response, 500, rpcError(-32603, "internal error"));
      });
  });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}${basePath}/`,
    port,
    server,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
