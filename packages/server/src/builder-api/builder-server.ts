import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type Bundler,
  type Logger,
  type Redactor,
  type RelayerSigner,
  RpcErrorCode,
} from "@bundlekit/core";
import { createJsonRpcRequestListener } from "@bundlekit/transport-jsonrpc";
import { builderJwtProblem } from "./builder-jwt.ts";
import { createBuilderMethods } from "./builder-methods.ts";

/** The builder API's listener, as `startBuilderServer` opened it. */
export interface BuilderServer {
  /** `http://host:port/` */
  url: string;
  close(): Promise<void>;
}

/** Where and how the builder API listens. */
export interface BuilderServerOptions {
  bundler: Bundler;
  /** Signs proposals asked with `sign: true`; undefined (or no keys) refuses them. */
  signer: RelayerSigner | undefined;
  /** The shared secret every request's JWT is signed with. */
  secret: Uint8Array;
  port: number;
  host: string;
  logger: Logger;
  redactor: Redactor;
  maxBodyBytes: number;
  maxBatchSize: number;
  /** Seconds since the epoch, for the JWT's `iat`. Default the wall clock. */
  nowSeconds?: () => number;
}

const unauthorized = (message: string) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: null,
    error: { code: RpcErrorCode.invalidRequest, message: `unauthorized: ${message}` },
  });

/**
 * The builder API (`builder_proposeBundle`, `builder_commitBundle`, `builder_releaseBundle`) on a
 * listener of its own, at `/`. Every request needs `Authorization: Bearer <JWT>` (HS256 with the
 * shared secret, `iat` within ±60 s); any other gets 401 and a JSON-RPC error saying why. Only
 * the builder methods are served there.
 */
export async function startBuilderServer(options: BuilderServerOptions): Promise<BuilderServer> {
  const nowSeconds = options.nowSeconds ?? (() => Math.floor(Date.now() / 1000));
  const listener = createJsonRpcRequestListener({
    bundler: options.bundler,
    rpc: {
      methods: createBuilderMethods(options.signer),
      standardMethods: false,
      logger: options.logger,
      redactor: options.redactor,
      maxBatchSize: options.maxBatchSize,
    },
    basePath: "/",
    maxBodyBytes: options.maxBodyBytes,
    // Any host name (a builder may reach it by a service name): every request needs the JWT,
    // which a page in a browser cannot make, so DNS rebinding gains nothing.
    allowedHosts: ["*"],
    healthPath: false,
    metricsPath: false,
  });
  const server = createServer((request, response) => {
    const problem = builderJwtProblem(request.headers.authorization, options.secret, nowSeconds());
    if (problem) {
      const body = unauthorized(problem);
      response
        .writeHead(401, {
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(body)),
          "www-authenticate": "Bearer",
        })
        .end(body);
      return;
    }
    listener(request, response)
      .then((handled) => {
        if (!handled) {
          const body = JSON.stringify({
            jsonrpc: "2.0",
            id: null,
            error: {
              code: RpcErrorCode.invalidRequest,
              message: "no JSON-RPC endpoint here; POST to /",
            },
          });
          response.writeHead(404, { "content-type": "application/json" }).end(body);
        }
      })
      .catch(() => {
        if (!response.headersSent) response.writeHead(500).end();
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const authority = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    url: `http://${authority}:${port}/`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
