import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/** Start `server` listening on `host:port` (0: a free port); resolves with the port and `host:port` as a URL authority. */
export async function listen(
  server: Server,
  port: number,
  host: string,
): Promise<{ port: number; authority: string }> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  return { port: bound, authority: `${host.includes(":") ? `[${host}]` : host}:${bound}` };
}
