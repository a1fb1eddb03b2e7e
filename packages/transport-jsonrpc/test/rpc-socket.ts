/** A JSON-RPC message as the tests read it: an answer, or a subscription notification. */
export interface RpcMessage {
  jsonrpc?: string;
  id?: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
  method?: string;
  params?: { subscription: string; result: Record<string, unknown> };
}

type Received = RpcMessage | RpcMessage[];

/** A JSON-RPC client over Node's own WebSocket, for tests: requests, raw frames, and notifications in arrival order. */
export interface RpcSocket {
  /** Send a raw frame, e.g. a malformed one: text, or binary bytes. */
  sendRaw(data: string | Uint8Array): void;
  /** Send a request (or batch) and wait for its answer: the message with its `id` (for a batch, the next array). */
  request(body: object): Promise<RpcMessage>;
  /** The next answer with this `id` (a parse error's is null). */
  answer(id: unknown): Promise<RpcMessage>;
  /** The next notification of `subscription`, in arrival order. */
  notification(
    subscription: string,
  ): Promise<RpcMessage & { params: NonNullable<RpcMessage["params"]> }>;
  /** Notifications of `subscription` received and not yet taken. */
  unread(subscription: string): RpcMessage[];
  /** Resolves with the close code once the connection is closed. */
  readonly closed: Promise<number>;
  close(): Promise<void>;
}

export async function openRpcSocket(url: string, timeoutMs = 30_000): Promise<RpcSocket> {
  const socket = new WebSocket(url);
  const unread: Received[] = [];
  const waiters: { match(message: Received): boolean; resolve(message: Received): void }[] = [];
  const closed = new Promise<number>((resolve) =>
    socket.addEventListener("close", (event) => resolve(event.code)),
  );
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data)) as Received;
    const waiter = waiters.findIndex((w) => w.match(message));
    if (waiter >= 0) waiters.splice(waiter, 1)[0]!.resolve(message);
    else unread.push(message);
  });
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener("open", () => resolve(), { once: true });
    socket.addEventListener("error", () => reject(new Error(`cannot connect to ${url}`)), {
      once: true,
    });
  });

  function take<T extends Received>(
    match: (message: Received) => boolean,
    what: string,
  ): Promise<T> {
    const index = unread.findIndex(match);
    if (index >= 0) return Promise.resolve(unread.splice(index, 1)[0] as T);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no ${what} within ${timeoutMs} ms`)),
        timeoutMs,
      );
      waiters.push({
        match,
        resolve: (message) => {
          clearTimeout(timer);
          resolve(message as T);
        },
      });
    });
  }

  const answer = (id: unknown) =>
    take<RpcMessage>(
      (m) => !Array.isArray(m) && m.id === id && m.method === undefined,
      `answer to id ${String(id)}`,
    );

  return {
    unread: (subscription) =>
      unread.filter(
        (m): m is RpcMessage => !Array.isArray(m) && m.params?.subscription === subscription,
      ),
    closed,
    sendRaw: (data) => socket.send(data),
    request(body: object) {
      socket.send(JSON.stringify(body));
      if (Array.isArray(body)) return take<RpcMessage>(Array.isArray, "batch answer");
      return answer((body as { id: unknown }).id);
    },
    answer,
    notification: (subscription) =>
      take(
        (m) =>
          !Array.isArray(m) &&
          m.method === "eth_subscription" &&
          m.params?.subscription === subscription,
        `notification for ${subscription}`,
      ),
    async close() {
      socket.close();
      await closed;
    },
  };
}
