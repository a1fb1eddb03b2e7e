import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { isIPv6, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { RpcErrorCode } from "@bundlekit/core";
import { busyHeaders, busyStatus, refuseUpgrade, rpcError, sendJson } from "./respond.ts";

export interface ConnectionLimitOptions {
  /** Most connections (HTTP keep-alive sockets and WebSockets) open at once. Default 1000. */
  maxConnections?: number;
  /**
   * Most connections open at once from one client address (an IPv6 client's /64 network counts
   * as one address). Behind a reverse proxy every client has the proxy's address: raise it to
   * `maxConnections` there and limit per client in the proxy. Default 100.
   */
  maxConnectionsPerIp?: number;
}

/** The defaults of the connection limits. */
export const connectionLimitDefaults = { maxConnections: 1000, maxConnectionsPerIp: 100 } as const;

/**
 * A connection past a limit is answered busy (429, -32005) to its first request (or upgrade) and closed;
 * connections already open keep being served.
 */
export interface ConnectionLimits {
  /** When the request's connection is over a limit: answer busy, close it and return true. */
  refuse(request: IncomingMessage, response: ServerResponse): boolean;
  /** When the upgrade's connection is over a limit: answer busy, close it and return true. */
  refuseUpgrade(request: IncomingMessage, socket: Duplex): boolean;
}

/** A refused connection that sends no request within this time is cut off. */
const refusedGraceMs = 2_000;

/** The address a client is counted under: IPv4 (also IPv4-mapped IPv6) as is, IPv6 by its /64 network. */
export function clientAddress(address: string | undefined): string {
  if (!address) return "unknown";
  if (address.startsWith("::ffff:") && address.includes(".")) return address.slice(7);
  if (!isIPv6(address)) return address;
  const [head = "", tail = ""] = address.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = address.includes("::")
    ? [...left, ...Array(8 - left.length - right.length).fill("0"), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(":")}::/64`;
}

/**
 * Count the connections of `server`, overall and per client address, and refuse those past the
 * limits. The server also drops, unanswered, connections past twice `maxConnections` (refused
 * ones included), so a flood cannot exhaust file descriptors.
 */
export function limitConnections(
  server: Server,
  options: ConnectionLimitOptions = {},
): ConnectionLimits {
  const max = options.maxConnections ?? connectionLimitDefaults.maxConnections;
  const perAddress = options.maxConnectionsPerIp ?? connectionLimitDefaults.maxConnectionsPerIp;
  server.maxConnections = 2 * max;
  const byAddress = new Map<string, number>();
  let open = 0;
  const refused = new WeakMap<Socket | Duplex, string>();

  server.on("connection", (socket: Socket) => {
    const address = clientAddress(socket.remoteAddress);
    const fromAddress = byAddress.get(address) ?? 0;
    const reason =
      open >= max
        ? `too many connections (limit ${max}); retry later`
        : fromAddress >= perAddress
          ? `too many connections from ${address} (limit ${perAddress}); close one or retry later`
          : undefined;
    if (reason) {
      refused.set(socket, reason);
      const cutOff = setTimeout(() => socket.destroy(), refusedGraceMs);
      socket.once("close", () => clearTimeout(cutOff));
      return;
    }
    open++;
    byAddress.set(address, fromAddress + 1);
    socket.once("close", () => {
      open--;
      const left = byAddress.get(address)! - 1;
      if (left > 0) byAddress.set(address, left);
      else byAddress.delete(address);
    });
  });

  const answer = (reason: string) => rpcError(RpcErrorCode.limitExceeded, reason);
  return {
    refuse(request, response) {
      const reason = refused.get(request.socket);
      if (reason === undefined) return false;
      sendJson(response, busyStatus, answer(reason), {
        ...busyHeaders({}),
        connection: "close",
      });
      return true;
    },
    refuseUpgrade(request, socket) {
      const reason = refused.get(request.socket);
      if (reason === undefined) return false;
      refuseUpgrade(socket, busyStatus, answer(reason));
      return true;
    },
  };
}
