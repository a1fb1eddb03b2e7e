import { once } from "node:events";
import { createServer } from "node:http";
import { createJsonRpcRequestListener } from "../src/http.ts";
import { createJsonRpcUpgradeHandler } from "../src/websocket.ts";
import { describeMountedEndpoint, hostHealth, mountedApp } from "./mounted-endpoint.ts";

describeMountedEndpoint("the request listener in a plain Node server", async (options) => {
  const rpc = createJsonRpcRequestListener(options);
  const upgrade = createJsonRpcUpgradeHandler(options);
  const server = createServer(async (request, response) => {
    if (await rpc(request, response)) return;
    const found = request.url === "/health";
    response
      .writeHead(found ? 200 : 404, { "content-type": "application/json" })
      .end(JSON.stringify(found ? hostHealth : {}));
  });
  upgrade.attach(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return mountedApp(server, () => upgrade.close());
});
