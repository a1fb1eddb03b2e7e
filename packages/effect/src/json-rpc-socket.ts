import type { JsonRpcSocketEndpoint } from "@bundlekit/transport-jsonrpc";
import { Effect, FiberSet, Option, Queue, Semaphore } from "effect";
import type { HttpServerRequest } from "effect/http";
import { Socket } from "effect/socket";

const utf8 = new TextDecoder();

/**
 * One WebSocket connection of the JSON-RPC endpoint on Effect's socket (`request.upgrade`): each
 * message answered by the transport's connection (`endpoint.connect`), subscriptions included,
 * answers and notifications written in order by one fiber. At most `maxInFlightRequests`
 * messages are answered at once; past that the socket is not read (Effect's reader then pauses
 * the connection). A message over `maxBodyBytes` closes it with 1009; a connection idle for
 * `idleTimeoutMs` without subscriptions with 1000. It ends when the client closes, or when the
 * scope closes (the server stops): every fiber interrupted, every subscription ended.
 */
export const serveJsonRpcSocket = (endpoint: JsonRpcSocketEndpoint, request: HttpServerRequest.HttpServerRequest) =>
  Effect.scoped(
    Effect.gen(function* () {
      const socket = yield* request.upgrade;
      const { pull } = yield* socket.reader;
      const { write } = yield* socket.writer;
      const outgoing = yield* Queue.unbounded<string>();
      yield* Queue.take(outgoing).pipe(Effect.flatMap(write), Effect.forever, Effect.forkScoped);
      const connection = yield* Effect.acquireRelease(
        Effect.sync(() =>
          endpoint.connect({ url: request.url, headers: request.headers }, (message) => void Queue.offerUnsafe(outgoing, JSON.stringify(message))),
        ),
        (opened) => Effect.sync(() => opened.close()),
      );
      const answering = yield* FiberSet.make();
      const slots = yield* Semaphore.make(endpoint.maxInFlightRequests);
      const close = (code: number, reason: string) => write(new Socket.CloseEvent(code, reason));
      const idle = endpoint.idleTimeoutMs;
      while (true) {
        const messages = idle > 0 ? yield* Effect.timeoutOption(pull, idle) : Option.some(yield* pull);
        if (Option.isNone(messages)) {
          if ((yield* FiberSet.size(answering)) > 0 || connection.subscriptions > 0) continue;
          return yield* close(1000, `idle for ${idle} ms`);
        }
        for (const message of messages.value) {
          const text = typeof message === "string" ? message : utf8.decode(message);
          if (Buffer.byteLength(text) > endpoint.maxBodyBytes) return yield* close(1009, `message exceeds the limit of ${endpoint.maxBodyBytes} bytes`);
          yield* Semaphore.take(slots, 1);
          yield* FiberSet.run(answering, Effect.promise(() => connection.receive(text)).pipe(Effect.ensuring(Semaphore.release(slots, 1))));
        }
      }
    }),
  ).pipe(
    // The client closed or the connection failed: nothing is left to answer.
    Effect.catchTag("SocketError", () => Effect.void),
  );
