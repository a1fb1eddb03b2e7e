/**
 * Numbers and checked hex written into bytes as the ABI lays them out, without making hex strings:
 * every operation is hashed at admission and encoded in each bundle it goes in.
 */

const maxSafe = BigInt(Number.MAX_SAFE_INTEGER);
const twoTo32 = 0x1_0000_0000;

/**
 * `value` (not negative, within `length` bytes, `length` at least 8) big-endian into `target` at `at`, all `length`
 * bytes written: a safe integer as two 32-bit halves after zeros, a larger one through its hex.
 */
export function writeUint(target: Buffer, at: number, length: number, value: bigint | number): void {
  if (typeof value === "bigint" && value > maxSafe) {
    target.write(value.toString(16).padStart(2 * length, "0"), at, length, "hex");
    return;
  }
  const n = Number(value);
  const high = Math.floor(n / twoTo32);
  const end = at + length;
  for (let i = at; i < end - 8; i++) target[i] = 0;
  target.writeUInt32BE(high, end - 8);
  target.writeUInt32BE(n - high * twoTo32, end - 4);
}

/** The `length` bytes of hex digits after `hex`'s `0x` into `target` at `at`; the caller has checked they are hex digits. */
export function writeHexDigits(target: Buffer, at: number, hex: string, length: number): void {
  for (let i = 0; i < length; i++) target[at + i] = (digit(hex.charCodeAt(2 + 2 * i)) << 4) | digit(hex.charCodeAt(3 + 2 * i));
}

/** The value of a hex digit's character code ('0'–'9', 'a'–'f', 'A'–'F'). */
const digit = (code: number) => (code & 0x0f) + (code >> 6) * 9;
