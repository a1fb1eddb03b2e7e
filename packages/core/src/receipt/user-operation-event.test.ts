import { type Address, encodeAbiParameters, type Hash, type Hex, pad, toHex } from "viem";
import { describe, expect, it } from "vitest";
import { seededRandom } from "../simulation/seeded-random.ts";
import {
  decodeUserOperationEvent,
  decodeUserOperationEventWithAbi,
  type RawLog,
  userOperationEventTopic,
  userOperationOutcome,
} from "./user-operation-event.ts";

function randomLog(seed: number): RawLog {
  const { int } = seededRandom(seed);
  const bytes = (length: number) =>
    toHex(Uint8Array.from({ length }, () => (int(3) === 0 ? 0 : int(256))));
  const uint = () => [0n, 2n ** 256n - 1n, BigInt(bytes(1 + int(32)))][int(3)]!;
  const address = () =>
    int(4) === 0 ? "0x0000000000000000000000000000000000000000" : (bytes(20) as Address);
  return {
    address: "0x0000000071727De22E5E9d8BAf0edAc6f37da032",
    topics: [userOperationEventTopic, bytes(32) as Hash, pad(address()), pad(address())],
    data: encodeAbiParameters(
      [{ type: "uint256" }, { type: "bool" }, { type: "uint256" }, { type: "uint256" }],
      [uint(), int(2) === 0, uint(), uint()],
    ),
    blockNumber: "0x1",
    blockHash: `0x${"ab".repeat(32)}`,
    transactionHash: `0x${"cd".repeat(32)}`,
    transactionIndex: "0x0",
    logIndex: "0x0",
  };
}

describe("decodeUserOperationEvent", () => {
  it("reads what viem's ABI decoder reads, for 1,000 random events", () => {
    for (let seed = 1; seed <= 1_000; seed++) {
      const log = randomLog(seed);
      expect(decodeUserOperationEvent(log), `seed ${seed}`).toEqual(
        decodeUserOperationEventWithAbi(log),
      );
    }
  });

  it("leaves a malformed event to viem's decoder, which refuses it as before", () => {
    const log = randomLog(1);
    const notBool: Hex = `0x${log.data.slice(2, 66)}${"0".repeat(63)}2${log.data.slice(130)}`;
    expect(() => decodeUserOperationEvent({ ...log, data: notBool })).toThrow();
    const highBit: Hex = `0x${log.data.slice(2, 66)}1${"0".repeat(62)}1${log.data.slice(130)}`;
    expect(() => decodeUserOperationEvent({ ...log, data: highBit })).toThrow();
    expect(() => decodeUserOperationEvent({ ...log, topics: log.topics.slice(0, 3) })).toThrow();
    expect(() => decodeUserOperationEvent({ ...log, data: `${log.data}00` as Hex })).not.toThrow();
    expect(decodeUserOperationEvent({ ...log, data: `${log.data}00` as Hex })).toEqual(
      decodeUserOperationEventWithAbi({ ...log, data: `${log.data}00` as Hex }),
    );
  });
});

/** What `read` gives `log` (its hash in lower case: the hand reading keeps a topic's letter case), or that it throws. */
function outcome<T extends { userOpHash: Hash }>(read: (log: RawLog) => T, log: RawLog): T | "throws" {
  try {
    const value = read(log);
    return { ...value, userOpHash: value.userOpHash.toLowerCase() };
  } catch {
    return "throws";
  }
}

/**
 * `log` with the character at `index` of its data (`topic` undefined) or of one of its topics
 * replaced by `char`: near-misses of a hex digit, and characters that pass for one when their
 * letter-case bit is set (`\x10`–`\x19` become `0`–`9`).
 */
function withChar(log: RawLog, char: string, index: number, topic?: number): RawLog {
  const replace = (text: string) => `${text.slice(0, index)}${char}${text.slice(index + 1)}` as Hex;
  if (topic === undefined) return { ...log, data: replace(log.data) };
  return { ...log, topics: log.topics.map((t, i) => (i === topic ? replace(t) : t)) };
}

describe("a UserOperationEvent read by hand", () => {
  const chars = ["g", "G", "x", "X", " ", "\x10", "\x19", "@", "`", "/", ":", "a", "F", "0", "1"];
  const places: [index: number, topic?: number][] = [
    [1], [2], [65], [66], [129], [130], [257],
    [1, 1], [2, 1], [65, 1], [1, 2], [2, 2], [25, 2], [26, 2], [65, 2], [25, 3], [26, 3], [65, 3],
  ];
  it("is read, or refused, exactly as viem's ABI decoder reads or refuses it, for a digit changed anywhere", () => {
    for (const seed of [1, 2, 3]) {
      for (const char of chars) {
        for (const [index, topic] of places) {
          const log = withChar(randomLog(seed), char, index, topic);
          const label = `seed ${seed}, ${JSON.stringify(char)} at ${index} of ${topic === undefined ? "data" : `topic ${topic}`}`;
          const expected = outcome(decodeUserOperationEventWithAbi, log);
          expect(outcome(decodeUserOperationEvent, log), label).toEqual(expected);
          const outcomeExpected = expected === "throws" ? expected : { userOpHash: expected.userOpHash, success: expected.success };
          expect(outcome(userOperationOutcome, log), label).toEqual(outcomeExpected);
        }
      }
    }
  });
});

describe("userOperationOutcome", () => {
  it("reads the hash and success that viem's ABI decoder reads, for 1,000 random events", () => {
    for (let seed = 1; seed <= 1_000; seed++) {
      const log = randomLog(seed);
      const { userOpHash, success } = decodeUserOperationEventWithAbi(log);
      expect(userOperationOutcome(log), `seed ${seed}`).toEqual({ userOpHash, success });
    }
  });

  it("leaves a malformed event to viem's decoder, as decodeUserOperationEvent does", () => {
    const log = randomLog(1);
    for (const digit of ["2", "f"]) {
      const notBool: Hex = `0x${log.data.slice(2, 66)}${"0".repeat(63)}${digit}${log.data.slice(130)}`;
      expect(() => userOperationOutcome({ ...log, data: notBool })).toThrow();
    }
    const highBit: Hex = `0x${log.data.slice(2, 66)}1${"0".repeat(62)}1${log.data.slice(130)}`;
    expect(() => userOperationOutcome({ ...log, data: highBit })).toThrow();
    expect(() => userOperationOutcome({ ...log, topics: log.topics.slice(0, 3) })).toThrow();
    const longer = { ...log, data: `${log.data}00` as Hex };
    const { userOpHash, success } = decodeUserOperationEventWithAbi(longer);
    expect(userOperationOutcome(longer)).toEqual({ userOpHash, success });
  });
});
