import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { RpcErrorCode } from "@bundlekit/core";
import { normalizePath } from "../endpoint.ts";
import { createNodeHttpHandler } from "../http.ts";
import type { JsonRpcHttpOptions } from "../http-endpoint.ts";
import { rpcError, sendJson } from "../respond.ts";
import type { JsonRpcWebSocketOptions } from "../socket-endpoint.ts";
import { createJsonRpcUpgradeHandler } from "../websocket.ts";

/** What the plugin uses of a Fastify instance, typed structurally: the transport does not depend on Fastify. */
export interface FastifyInstanceLike {
  prefix: string;
  server: Server;
  removeAllContentTypeParsers(): void;
  addContentTypeParser(
    type: string,
    parser: (request: unknown, payload: unknown, done: (error: null) => void) => void,
  ): void;
  route(route: {
    method: string[];
    url: string;
    handler: (
      request: { raw: IncomingMessage },
      reply: { raw: ServerResponse; hijack(): unknown },
    ) => Promise<void>;
  }): unknown;
  addHook(name: "preClose", hook: () => Promise<void>): unknown;
}

export interface JsonRpcFastifyOptions extends JsonRpcHttpOptions, JsonRpcWebSocketOptions {}

/** Every method the endpoint answers (POST, and 405 or a CORS preflight for the others); Fastify adds HEAD itself. */
const endpointMethods = ["DELETE", "GET", "OPTIONS", "PATCH", "POST", "PUT"];

/**
 * The JSON-RPC endpoint as a Fastify plugin: `app.register(jsonRpcFastifyPlugin, { bundler,
 * prefix: "/bundler" })`. The endpoint sits at the plugin's prefix plus `basePath` (default
 * none), its health probe and metrics below it; WebSocket on the same path from
 * `app.server`, closed when the app closes. Inside the plugin bodies are not parsed by Fastify:
 * the endpoint reads them, so its body limit, 415 and -32700 answers apply as on its own server.
 */
export async function jsonRpcFastifyPlugin(
  fastify: FastifyInstanceLike,
  options: JsonRpcFastifyOptions,
): Promise<void> {
  const prefix = normalizePath(fastify.prefix);
  const basePath = prefix + normalizePath(options.basePath ?? "/");
  const settings = { ...options, basePath };
  const serve = createNodeHttpHandler(settings);
  const upgrade = createJsonRpcUpgradeHandler(settings);

  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser("*", (_request, _payload, done) => done(null));
  const [endpointPath = "", ...probePaths] = serve.paths;
  const route = (method: string[], path: string) => {
    if (!`${path}/`.startsWith(`${prefix}/`))
      throw new Error(
        `${path} lies outside the plugin's prefix ${prefix}: give healthPath and metricsPath relative to basePath`,
      );
    const relative = path.slice(prefix.length);
    const urls = relative === "" ? ["/"] : [relative, `${relative}/`];
    for (const url of urls)
      fastify.route({
        method,
        url,
        async handler(request, reply) {
          reply.hijack();
          if (!(await serve(request.raw, reply.raw)))
            sendJson(
              reply.raw,
              404,
              rpcError(
                RpcErrorCode.invalidRequest,
                `no JSON-RPC endpoint here for ${request.raw.method}`,
              ),
            );
        },
      });
  };
  route(endpointMethods, normalizePath(endpointPath));
  for (const path of probePaths) route(["GET"], path);
  upgrade.attach(fastify.server);
  fastify.addHook("preClose", () => upgrade.close());
}
