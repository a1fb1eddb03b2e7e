import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import type { Bundler, RpcMethod } from "@bundlekit/core";
import { WebSocket } from "ws";
import {
  type JsonRpcServer,
  type JsonRpcServerOptions,
  startJsonRpcServer,
} from "../src/server.ts";

/** A stand-in engine: the chain id, and no status changes. The transport needs nothing more. */
export const stubBundler = { chainId: 31337, onStatusChange: () => () => {} } as unknown as Bundler;

/**
 * A method that holds every call until `release()`, counting calls and how many run at once:
 * what a handler sees of the requests a transport lets through.
 */
export function heldMethod() {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const seen = { calls: 0, running: 0, mostRunning: 0 };
  const method: RpcMethod = async () => {
    seen.calls++;
    seen.running++;
    seen.mostRunning = Math.max(seen.mostRunning, seen.running);
    await gate;
    seen.running--;
    return "done";
  };
  return { method, seen, release };
}

/** The transport's own server over the stub engine at `/rpc`, with `methods` added and `options` applied. */
export function startStubServer(
  options: Partial<JsonRpcServerOptions> = {},
  methods: Record<string, RpcMethod> = {},
) {
  return startJsonRpcServer({
    bundler: stubBundler,
    basePath: "/rpc",
    rpc: { methods },
    ...options,
  });
}

export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: the tests read answers of every shape
  body: any;
}

/**
 * One request on a connection of its own, with exactly these headers (fetch would add its own,
 * and may not set `Host`).
 */
export function rawRequest(
  url: string,
  init: {
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    signal?: AbortSignal;
  } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      { method: init.method ?? "POST", headers: init.headers, agent: false, signal: init.signal },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          const isJson = /^application\/json\b/.test(response.headers["content-type"] ?? "");
          resolve({
            status: response.statusCode!,
            headers: response.headers,
            body: isJson ? JSON.parse(text) : text,
          });
        });
      },
    );
    request.on("error", reject);
    request.end(init.body);
  });
}

/** Connections the server has open (refused ones until they close included). */
export const connections = (server: JsonRpcServer) =>
  new Promise<number>((resolve, reject) =>
    server.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
  );

/** Whether a WebSocket upgrade with these headers (and `Origin`) opens, or the HTTP status it is refused with. */
export function upgradeStatus(
  url: string,
  headers: Record<string, string> = {},
  origin?: string,
): Promise<"open" | number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers, ...(origin ? { origin } : {}) });
    socket.once("open", () => {
      socket.close();
      resolve("open");
    });
    socket.once("unexpected-response", (_request, response) => {
      response.resume();
      resolve(response.statusCode!);
    });
    socket.once("error", (error) => {
      if (!String(error).includes("Unexpected server response")) reject(error);
    });
  });
}
