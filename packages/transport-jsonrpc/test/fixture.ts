import type { ChainClient } from "@bundlekit/core";
import { engineFixture } from "../../core/test/fixtures.ts";
import { createJsonRpcMetrics } from "../src/metrics.ts";
import { startJsonRpcServer } from "../src/server.ts";

/** Largest body the test servers accept: room for user operations, small enough to exceed in a test. */
export const maxBodyBytes = 16 * 1024;

/**
 * A devnet, an engine over it that bundles only when asked, and the JSON-RPC server in front of
 * it with metrics, at `/v1/<chainId>/`.
 */
export async function serverFixture() {
  const chain = await engineFixture();
  const { bundler, store } = await chain.makeBundler();
  const metrics = createJsonRpcMetrics({
    bundler,
    client: chain.client as unknown as ChainClient,
    store,
  });
  const server = await startJsonRpcServer({
    bundler,
    basePath: `/v1/${chain.devnet.chainId}`,
    maxBodyBytes,
    metrics,
    maxSubscriptions: 3,
  });
  return {
    ...chain,
    bundler,
    store,
    metrics,
    server,
    async stop() {
      await server.close();
      metrics.close();
      await chain.devnet.stop();
    },
  };
}
