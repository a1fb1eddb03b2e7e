/**
 * keccak256 in WebAssembly, its module written here instruction by instruction (no binary shipped,
 * no build step): the permutation unrolled over 25 lanes held in locals, one call per hash. The
 * input is laid out in the module's memory and the hash is read from it, so a caller that builds
 * its input anyway (an operation hash's words) writes it there and copies nothing.
 *
 * Memory: the hash at 0–31 (the state's first four lanes), the round constants at 32–223, the
 * last block padded at 224–359, the input from 384 on. `hash(length)` absorbs `length` bytes from
 * 384 and writes the hash at 0.
 */

/** Where the input starts in the module's memory. */
export const inputOffset = 384;
const roundConstantsOffset = 32;
const padOffset = 224;
const rate = 136;

/** A keccak256 over the module's memory. */
export interface WasmKeccak {
  /** The input area (from `inputOffset`), at least `length` bytes; a new view once the memory grows. */
  input(length: number): Uint8Array;
  /** keccak256 of the first `length` bytes of the input area: the 32 bytes returned are overwritten by the next hash. */
  digest(length: number): Uint8Array;
}

/** The little of the WebAssembly API used here: the project's TypeScript libraries (ES2023, Node) declare none of it. */
interface WebAssemblyApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: { memory: { buffer: ArrayBuffer; grow(pages: number): number }; hash: (length: number) => void } };
}

export function createWasmKeccak(): WasmKeccak {
  const api = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;
  const { memory, hash } = new api.Instance(new api.Module(moduleBytes())).exports;
  let view = new Uint8Array(memory.buffer);
  let output = view.subarray(0, 32);
  const input = (length: number) => {
    const needed = inputOffset + length;
    if (needed > view.length) {
      memory.grow(Math.ceil((needed - view.length) / 65_536));
      view = new Uint8Array(memory.buffer);
      output = view.subarray(0, 32);
    }
    return view.subarray(inputOffset);
  };
  return {
    input,
    digest(length) {
      hash(length);
      return output;
    },
  };
}

/** The 24 round constants, from the LFSR of the Keccak reference (FIPS 202, `rc`). */
function roundConstants(): bigint[] {
  const constants: bigint[] = [];
  let r = 1;
  for (let round = 0; round < 24; round++) {
    let constant = 0n;
    for (let j = 0; j < 7; j++) {
      r = ((r << 1) ^ ((r >> 7) * 0x71)) & 0xff;
      if (r & 2) constant ^= 1n << ((1n << BigInt(j)) - 1n);
    }
    constants.push(constant);
  }
  return constants;
}

/** ρ's rotation of lane x + 5y. */
const rotations = [0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14];

const op = {
  block: 0x02,
  loop: 0x03,
  if: 0x04,
  end: 0x0b,
  br: 0x0c,
  brIf: 0x0d,
  void: 0x40,
  localGet: 0x20,
  localSet: 0x21,
  i32Load8U: 0x2d,
  i64Load: 0x29,
  i32Store8: 0x3a,
  i64Store: 0x37,
  i32Const: 0x41,
  i64Const: 0x42,
  i32Eqz: 0x45,
  i32LtU: 0x49,
  i32Add: 0x6a,
  i32Sub: 0x6b,
  i32Or: 0x72,
  i32Shl: 0x74,
  i64And: 0x83,
  i64Or: 0x84,
  i64Xor: 0x85,
  i64Rotl: 0x89,
  prefix: 0xfc,
  memoryCopy: 0x0a,
  memoryFill: 0x0b,
};

const unsigned = (value: number): number[] => {
  const out: number[] = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value !== 0) byte |= 0x80;
    out.push(byte);
  } while (value !== 0);
  return out;
};
const signed = (value: number): number[] => {
  const out: number[] = [];
  for (;;) {
    const byte = value & 0x7f;
    value >>= 7;
    if ((value === 0 && (byte & 0x40) === 0) || (value === -1 && (byte & 0x40) !== 0)) return [...out, byte];
    out.push(byte | 0x80);
  }
};
const vector = (items: number[][]) => [...unsigned(items.length), ...items.flat()];
const section = (id: number, body: number[]) => [id, ...unsigned(body.length), ...body];
const name = (text: string) => vector([...text].map((c) => [c.charCodeAt(0)]));

/**
 * Lanes kept complemented in the state between rounds (lane complementing, as in the Keccak team's
 * optimized code): χ then complements one term a plane instead of five.
 */
const complemented = [1, 2, 8, 12, 17, 20];

/**
 * χ of each plane y over those lanes: for lane x, `e[x] = b[x] ^ (b[x+1] op b[x+2])`, written as
 * four characters: `~` where b[x] is complemented, `~` where b[x+1] is, the operator (`|` or `&`),
 * `~` where b[x+2] is (a space where not).
 */
const chiPatterns = [
  ["  | ", " ~| ", "  & ", "  | ", "  & "],
  ["  | ", "  & ", "  |~", "  | ", "  & "],
  ["  | ", "  & ", " ~& ", "~ | ", "  & "],
  ["  & ", "  | ", " ~| ", "~ & ", "  | "],
  [" ~& ", "~ | ", "  & ", "  | ", "  & "],
];

/** The module: one memory, one function `hash(length: i32)`. */
function moduleBytes(): Uint8Array {
  // Locals: 0 length (the parameter), 1 pointer, 2 remaining, 3 round offset, 4 last block;
  // 5–29 the lanes a, 30–34 the column parities c, 35–39 θ's d, 40–44 a plane b after ρ and π,
  // 45–69 the lanes e of every other round.
  const length = 0;
  const pointer = 1;
  const remaining = 2;
  const round = 3;
  const last = 4;
  const a = (i: number) => 5 + i;
  const c = (x: number) => 30 + x;
  const d = (x: number) => 35 + x;
  const b = (x: number) => 40 + x;
  const e = (i: number) => 45 + i;
  const get = (local: number) => [op.localGet, local];
  const set = (local: number) => [op.localSet, local];
  const i32 = (value: number) => [op.i32Const, ...signed(value)];

  const code: number[] = [];
  const emit = (...parts: (number | number[])[]) => {
    for (const part of parts) {
      if (typeof part === "number") code.push(part);
      else code.push(...part);
    }
  };

  // The state starts at zero: its complemented lanes all ones.
  for (const lane of complemented) emit(op.i64Const, ...signed(-1), set(a(lane)));
  emit(i32(inputOffset), set(pointer), get(length), set(remaining));
  emit(op.block, op.void, op.loop, op.void);
  // Fewer than `rate` bytes left: pad them into the last block (0x01 after them, 0x80 at its end) and absorb that.
  emit(get(remaining), i32(rate), op.i32LtU, op.if, op.void);
  emit(i32(padOffset), i32(0), i32(rate), op.prefix, op.memoryFill, 0);
  emit(i32(padOffset), get(pointer), get(remaining), op.prefix, op.memoryCopy, 0, 0);
  emit(i32(padOffset), get(remaining), op.i32Add, i32(1), op.i32Store8, 0, 0);
  emit(i32(padOffset + rate - 1), i32(padOffset + rate - 1), op.i32Load8U, 0, 0, i32(0x80), op.i32Or, op.i32Store8, 0, 0);
  emit(i32(padOffset), set(pointer), i32(1), set(last));
  emit(op.end);
  // Absorb: the block's 17 lanes into the state.
  for (let i = 0; i < rate / 8; i++) emit(get(a(i)), get(pointer), op.i64Load, 0, ...unsigned(i * 8), op.i64Xor, set(a(i)));
  // Keccak-f[1600]: 24 rounds, two at a time, from the lanes a into e and back: each plane of the
  // new state is computed from five lanes of the old (θ, ρ and π), then χ, so that few values are
  // live at once.
  emit(i32(0), set(round), op.loop, op.void);
  const roundInto = (from: (i: number) => number, to: (i: number) => number, constantAt: number) => {
    for (let x = 0; x < 5; x++) emit(get(from(x)), get(from(x + 5)), op.i64Xor, get(from(x + 10)), op.i64Xor, get(from(x + 15)), op.i64Xor, get(from(x + 20)), op.i64Xor, set(c(x)));
    // θ: d[x] = c[x-1] ^ rotl(c[x+1], 1).
    for (let x = 0; x < 5; x++) emit(get(c((x + 4) % 5)), get(c((x + 1) % 5)), op.i64Const, 1, op.i64Rotl, op.i64Xor, set(d(x)));
    for (let y = 0; y < 5; y++) {
      // ρ and π into plane y: b[x] = rotl(lane (x', x) ^ d[x'], r), x' = 3(y - 3x) mod 5.
      for (let x = 0; x < 5; x++) {
        const sx = (((3 * (y - 3 * x)) % 5) + 5) % 5;
        const lane = sx + 5 * x;
        const rotation = rotations[lane]!;
        emit(get(from(lane)), get(d(sx)), op.i64Xor);
        if (rotation !== 0) emit(op.i64Const, ...signed(rotation), op.i64Rotl);
        emit(set(b(x)));
      }
      // χ over the complemented lanes, as `chiPatterns` says; ι: the round constant into lane 0.
      for (let x = 0; x < 5; x++) {
        const pattern = chiPatterns[y]![x]!;
        const term = (dx: number, mark: string) => [...get(b((x + dx) % 5)), ...(mark === "~" ? [op.i64Const, ...signed(-1), op.i64Xor] : [])];
        emit(term(0, pattern[0]!), term(1, pattern[1]!), term(2, pattern[3]!), pattern[2] === "|" ? op.i64Or : op.i64And, op.i64Xor);
        if (x === 0 && y === 0) emit(get(round), op.i64Load, 3, ...unsigned(roundConstantsOffset + constantAt), op.i64Xor);
        emit(set(to(x + 5 * y)));
      }
    }
  };
  roundInto(a, e, 0);
  roundInto(e, a, 8);
  emit(get(round), i32(16), op.i32Add, set(round), get(round), i32(24 * 8), op.i32LtU, op.brIf, 0, op.end);
  // The last block absorbed: done; else the next.
  emit(get(last), op.brIf, 1);
  emit(get(pointer), i32(rate), op.i32Add, set(pointer), get(remaining), i32(rate), op.i32Sub, set(remaining), op.br, 0);
  emit(op.end, op.end);
  // Squeeze: the state's first 32 bytes, its complemented lanes complemented back.
  for (let i = 0; i < 4; i++) {
    emit(i32(0), get(a(i)));
    if (complemented.includes(i)) emit(op.i64Const, ...signed(-1), op.i64Xor);
    emit(op.i64Store, 3, ...unsigned(i * 8));
  }
  emit(op.end);

  const i32Type = 0x7f;
  const i64Type = 0x7e;
  const locals = vector([
    [...unsigned(4), i32Type],
    [...unsigned(65), i64Type],
  ]);
  const body = [...locals, ...code];
  const constants = new Uint8Array(24 * 8);
  const words = new DataView(constants.buffer);
  for (const [i, constant] of roundConstants().entries()) words.setBigUint64(i * 8, constant, true);
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, vector([[0x60, ...vector([[i32Type]]), ...vector([])]])),
    ...section(3, vector([[0]])),
    ...section(5, vector([[0x00, 1]])),
    ...section(7, vector([[...name("memory"), 0x02, 0], [...name("hash"), 0x00, 0]])),
    ...section(10, vector([[...unsigned(body.length), ...body]])),
    ...section(11, vector([[0x00, op.i32Const, ...signed(roundConstantsOffset), op.end, ...vector([...constants].map((byte) => [byte]))]])),
  ]);
}
