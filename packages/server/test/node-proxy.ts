import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

/** What the proxy knows of a request it forwards: its JSON-RPC method (for a batch, the first that a hold matches, else the first). */
export interface ProxiedRequest {
  method: string;
}

/**
 * How the proxy answers instead of forwarding, as a failing node does: `fail` with HTTP 500,
 * `reject` with a JSON-RPC error to every method but `eth_chainId`, `reset` by dropping the connection.
 */
export type NodeFault = "fail" | "reject" | "reset";

/**
 * A forwarding HTTP proxy in front of a node (on any path, as hosted providers serve one) that can
 * fail, or stop answering as a hung node does: while holding, the requests it matches are accepted
 * and never answered until `release()`.
 */
export interface NodeProxy {
  /** The URL to give the service instead of the node's. */
  url: string;
  /** From now on answer every request with `fault` instead of forwarding it; `undefined` forwards again. */
  fault(fault: NodeFault | undefined): void;
  /** From now on, hold every request `match` accepts (default: all), and every batch holding one, instead of forwarding it. */
  hold(match?: (request: ProxiedRequest) => boolean): void;
  /** Resolves once a request `match` accepts is held (at once if one already is). */
  held(match?: (request: ProxiedRequest) => boolean): Promise<ProxiedRequest>;
  /** How many requests `match` accepts are held now. */
  heldCount(match: (request: ProxiedRequest) => boolean): number;
  /** Stop holding, and forward every held request. */
  release(): void;
  close(): Promise<void>;
}

const readBody = (request: IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks)));
    request.on("error", reject);
  });

export async function startNodeProxy(target: string): Promise<NodeProxy> {
  let holding: ((request: ProxiedRequest) => boolean) | undefined;
  let faulty: NodeFault | undefined;
  const heldRequests: { request: ProxiedRequest; forward: () => void }[] = [];
  const waiters: {
    match: (request: ProxiedRequest) => boolean;
    resolve: (request: ProxiedRequest) => void;
  }[] = [];

  const server = createServer((request, response) => {
    void readBody(request).then((body) => {
      if (faulty === "reset") return request.socket.destroy();
      if (faulty === "fail") return response.writeHead(500).end("upstream unavailable");
      const parsed = JSON.parse(body.toString("utf8")) as { method: string } | { method: string }[];
      // The service batches requests that go out together: a batch is held when any of its requests is matched.
      const requests = (Array.isArray(parsed) ? parsed : [parsed]).map((r) => ({ method: r.method ?? "" }));
      const matched = holding && requests.find(holding);
      const proxied = matched ?? requests[0] ?? { method: "" };
      if (faulty === "reject" && proxied.method !== "eth_chainId") {
        const { id = null } = (Array.isArray(parsed) ? parsed[0] : parsed) as { id?: unknown };
        const error = { jsonrpc: "2.0", id, error: { code: -32000, message: "header not found" } };
        return response
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify(error));
      }
      const forward = () => {
        fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body })
          .then(async (answer) => {
            const text = await answer.text();
            response.writeHead(answer.status, { "content-type": "application/json" }).end(text);
          })
          .catch(() => response.destroy());
      };
      if (!matched) return forward();
      heldRequests.push({ request: proxied, forward });
      for (const waiter of waiters.filter((w) => w.match(proxied))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(proxied);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    fault(fault) {
      faulty = fault;
    },
    hold(match = () => true) {
      holding = match;
    },
    held(match = () => true) {
      const found = heldRequests.find((held) => match(held.request));
      if (found) return Promise.resolve(found.request);
      return new Promise((resolve) => waiters.push({ match, resolve }));
    },
    heldCount: (match) => heldRequests.filter((held) => match(held.request)).length,
    release() {
      holding = undefined;
      for (const held of heldRequests.splice(0)) held.forward();
    },
    close: () =>
      new Promise<void>((resolve) => {
        heldRequests.length = 0;
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
