import { describe, expect, it } from "vitest";
import { redactUrl, redactUrls, urlSecrets } from "./redact-urls.ts";
import { silentLogger } from "../ports/logger.ts";
import { redactingLogger } from "./redacting-logger.ts";
import { createRedactor, REDACTED, type Redactor } from "./redactor.ts";

const KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const NODE =
  "https://eth-mainnet.g.alchemy.com/v2/AbCdEf0123456789AbCdEf0123456789?apikey=q1w2e3r4t5";

describe("redactUrl", () => {
  it("keeps scheme, host and port of any scheme, and hides userinfo, path and query", () => {
    expect(redactUrl(NODE)).toBe("https://eth-mainnet.g.alchemy.com/…");
    expect(redactUrl("https://mainnet.infura.io/v3/0123456789abcdef")).toBe(
      "https://mainnet.infura.io/…",
    );
    expect(redactUrl("wss://user:pw@node.example:8546/ws/KEY")).toBe("wss://node.example:8546/…");
    expect(redactUrl("postgres://bundler:s3cret@db.internal:5432/bundlekit?sslmode=require")).toBe(
      "postgres://db.internal:5432/…",
    );
    expect(redactUrl("redis://:pw@cache:6379")).toBe("redis://cache:6379");
    expect(redactUrl("http://[::1]:8545/?key=x")).toBe("http://[::1]:8545/…");
    expect(redactUrl("http://127.0.0.1:8545")).toBe("http://127.0.0.1:8545");
  });

  it("keeps only the scheme when a password with a slash hides the host", () => {
    expect(redactUrl("postgres://user:pa/ss@db:5432/x")).toBe("postgres://…");
    expect(redactUrl("postgres://user/ss@db/x")).toBe("postgres://…");
  });
});

describe("redactUrls", () => {
  it("cuts every URL in a text, as viem's error messages carry them", () => {
    const message = `HTTP request failed.\n\nURL: ${NODE}\nRequest body: {"method":"eth_chainId"}\n\nDetails: fetch failed`;
    expect(redactUrls(message)).toBe(
      'HTTP request failed.\n\nURL: https://eth-mainnet.g.alchemy.com/…\nRequest body: {"method":"eth_chainId"}\n\nDetails: fetch failed',
    );
  });

  it("leaves the punctuation after a URL in place", () => {
    expect(redactUrls(`cannot open postgres://u:pw@db:5432/x: refused (see ${NODE}).`)).toBe(
      "cannot open postgres://db:5432/…: refused (see https://eth-mainnet.g.alchemy.com/…).",
    );
  });

  it("keeps file URLs of stack frames", () => {
    expect(redactUrls("at run (file:///work/src/a.ts:10:5)")).toBe(
      "at run (file:///work/src/a.ts:10:5)",
    );
  });
});

describe("urlSecrets", () => {
  it("names the password, query values and key-like path segments, not ordinary segments", () => {
    expect(
      urlSecrets(
        "https://u:pw%21@h.example/v2/AbCdEf0123456789AbCdEf0123456789/mainnet?apikey=q1w2&x=",
      ),
    ).toEqual(["pw%21", "pw!", "AbCdEf0123456789AbCdEf0123456789", "q1w2"]);
    expect(urlSecrets("not a url")).toEqual([]);
  });
});

describe("createRedactor", () => {
  const redactor = createRedactor([KEY, "hunter2@", undefined, ...urlSecrets(NODE)]);

  it("hides a hex secret with or without 0x, in any case, and in decimal", () => {
    const text = `key ${KEY} bare ${KEY.slice(2).toUpperCase()} decimal ${BigInt(KEY).toString()}`;
    expect(redactor.text(text)).toBe(`key 0x${REDACTED} bare ${REDACTED} decimal ${REDACTED}`);
  });

  it("hides a secret as written and URL-encoded, and a URL's key without the URL around it", () => {
    expect(redactor.text("password hunter2@ or hunter2%40")).toBe(
      `password ${REDACTED} or ${REDACTED}`,
    );
    expect(redactor.text("eth-mainnet.g.alchemy.com/v2/AbCdEf0123456789AbCdEf0123456789")).toBe(
      `eth-mainnet.g.alchemy.com/v2/${REDACTED}`,
    );
  });

  it("redacts values through arrays, objects, errors and their causes, and hides a bigint equal to a secret", () => {
    const cause = new Error(`fetch ${NODE} failed`);
    const value = redactor.value({
      list: [NODE, 1],
      nested: { key: KEY, amount: 5n, secretNumber: BigInt(KEY), at: new Date(0) },
      error: new Error("outer", { cause }),
    }) as Record<string, unknown>;
    expect(value.list).toEqual(["https://eth-mainnet.g.alchemy.com/…", 1]);
    expect(value.nested).toEqual({
      key: `0x${REDACTED}`,
      amount: 5n,
      secretNumber: REDACTED,
      at: new Date(0),
    });
    expect(value.error).toMatchObject({
      name: "Error",
      message: "outer",
      cause: { message: "fetch https://eth-mainnet.g.alchemy.com/… failed" },
    });
    expect(JSON.stringify(value.error)).not.toContain("AbCdEf0123456789");
    expect(cause.message).toContain("AbCdEf0123456789");
  });

  it("redacts an object each time it appears, and ends a cycle", () => {
    const shared = { url: NODE };
    const cyclic: Record<string, unknown> = { url: NODE };
    cyclic.self = cyclic;
    expect(redactor.value({ a: shared, b: shared, cyclic })).toEqual({
      a: { url: "https://eth-mainnet.g.alchemy.com/…" },
      b: { url: "https://eth-mainnet.g.alchemy.com/…" },
      cyclic: { url: "https://eth-mainnet.g.alchemy.com/…", self: "[circular]" },
    });
  });

  it("redacts an error in place: message, stack, string properties and causes", () => {
    const cause = Object.assign(new Error(`at ${NODE}`), {
      url: NODE,
      metaMessages: [`URL: ${NODE}`],
    });
    const error = redactor.error(new Error(`signing with ${KEY}`, { cause }));
    const all = JSON.stringify([
      error.message,
      error.stack,
      cause.message,
      cause.stack,
      cause.url,
      cause.metaMessages,
    ]);
    expect(all).not.toContain("AbCdEf0123456789");
    expect(all).not.toContain(KEY.slice(2));
    expect(cause.url).toBe("https://eth-mainnet.g.alchemy.com/…");
  });

  it("is idempotent, and with no secrets still cuts URLs", () => {
    const once = redactor.text(`${NODE} ${KEY}`);
    expect(redactor.text(once)).toBe(once);
    expect(createRedactor().text(`node ${NODE}`)).toBe("node https://eth-mainnet.g.alchemy.com/…");
  });
});

describe("redactingLogger", () => {
  it("passes message and fields through the redactor", () => {
    const lines: unknown[] = [];
    const record = (message: string, fields?: Record<string, unknown>) =>
      lines.push([message, fields]);
    const logger = redactingLogger(
      { debug: record, info: record, warn: record, error: record },
      createRedactor([KEY]),
    );
    logger.error(`bundle failed at ${NODE}`, { error: `key ${KEY}` });
    logger.debug("no fields");
    expect(lines).toEqual([
      ["bundle failed at https://eth-mainnet.g.alchemy.com/…", { error: `key 0x${REDACTED}` }],
      ["no fields", undefined],
    ]);
  });

  it("formats nothing for the silent logger: lines nobody writes cost no redaction", () => {
    let redacted = 0;
    const counting: Redactor = {
      text(text) {
        redacted++;
        return text;
      },
      value(value) {
        redacted++;
        return value;
      },
      error(error) {
        redacted++;
        return error;
      },
    };
    const logger = redactingLogger(silentLogger, counting);
    logger.debug("operation accepted", { userOpHash: `0x${"ab".repeat(32)}` });
    logger.error("bundle failed");
    expect(redacted).toBe(0);
  });
});
