import { type Address, getContractAddress, type Hex, keccak256, pad } from "viem";
import { describe, expect, it } from "vitest";
import type { PhaseTrace } from "../../../ports/validation-trace.ts";
import type { Prestate } from "../prestate.ts";
import { runTracedCall } from "./run-traced-call.ts";

/**
 * The ERC-7562 collector on hand-written bytecode, run in `@ethereumjs/evm` as a validation is
 * (`runTracedCall`), no node: a stand-in EntryPoint calls each entity once (a phase), and each
 * entity's code uses the opcodes the rules look at.
 */

// biome-ignore format: bytecode, one instruction stream
const opcodes = {
  STOP: 0x00, SHL: 0x1b, ISZERO: 0x15, KECCAK256: 0x20, ADDRESS: 0x30, BALANCE: 0x31, ORIGIN: 0x32, CALLDATASIZE: 0x36,
  GASPRICE: 0x3a, EXTCODESIZE: 0x3b, EXTCODECOPY: 0x3c, EXTCODEHASH: 0x3f, BLOCKHASH: 0x40, COINBASE: 0x41, TIMESTAMP: 0x42,
  NUMBER: 0x43, PREVRANDAO: 0x44, GASLIMIT: 0x45, SELFBALANCE: 0x47, BASEFEE: 0x48, BLOBHASH: 0x49, BLOBBASEFEE: 0x4a,
  POP: 0x50, MSTORE: 0x52, SLOAD: 0x54, SSTORE: 0x55, JUMP: 0x56, JUMPI: 0x57, GAS: 0x5a, JUMPDEST: 0x5b, TLOAD: 0x5c,
  TSTORE: 0x5d, PUSH0: 0x5f, CREATE: 0xf0, CALL: 0xf1, CALLCODE: 0xf2, DELEGATECALL: 0xf4, CREATE2: 0xf5, STATICCALL: 0xfa,
  REVERT: 0xfd, INVALID: 0xfe, SELFDESTRUCT: 0xff,
} as const;
type Opcode = keyof typeof opcodes;
/** Raw bytes in the code (a PUSH with its operand, an unassigned opcode). */
type Raw = { raw: string };

/** PUSHn of `value`, n its size in bytes (at least 1). */
function push(value: bigint | number | Hex): Raw {
  const hex = typeof value === "string" ? value.slice(2) : BigInt(value).toString(16);
  const bytes = Math.max(1, Math.ceil(hex.length / 2));
  return { raw: (0x5f + bytes).toString(16) + hex.padStart(bytes * 2, "0") };
}

function asm(...parts: (Opcode | Raw)[]): Hex {
  return `0x${parts.map((p) => (typeof p === "string" ? opcodes[p].toString(16).padStart(2, "0") : p.raw)).join("")}`;
}

/** `CALL`/`CALLCODE` with `value`, the input `memory[argsOffset, argsOffset + argsSize)`. */
// biome-ignore format: bytecode, one instruction stream
const callWithValue = (kind: "CALL" | "CALLCODE", to: Address, value: number, argsOffset = 0, argsSize = 0, gas: Opcode | Raw = push(100_000)) =>
  [push(0), push(0), push(argsSize), push(argsOffset), push(value), push(to), gas, kind, "POP"] as const;
/** `STATICCALL`/`DELEGATECALL` with the input `memory[0, argsSize)`. */
// biome-ignore format: bytecode, one instruction stream
const callWithoutValue = (kind: "STATICCALL" | "DELEGATECALL", to: Address | Hex, argsSize = 0, gas: Opcode | Raw = push(100_000)) =>
  [push(0), push(0), push(argsSize), push(0), push(to), gas, kind, "POP"] as const;

const entryPoint: Address = "0x00000000000000000000000000000000000000e0";
const caller: Address = "0x00000000000000000000000000000000000000c0";

/**
 * The stand-in EntryPoint. Called with data: uses TIMESTAMP, SLOAD, KECCAK256 and EXTCODESIZE
 * itself (before any phase), then calls each entity with its selector (one phase each), then
 * TIMESTAMP, SLOAD and KECCAK256 again. Called without data (an entity calling it back, inside a
 * phase): TIMESTAMP, SLOAD of slot 5 and a CREATE.
 */
function entryPointCode(entities: { address: Address; selector: Hex; gas?: number }[]): Hex {
  // biome-ignore format: bytecode, one instruction stream
  const fallback = asm(
    "CALLDATASIZE", push(0x10), "JUMPI",
    "TIMESTAMP", "POP", push(5), "SLOAD", "POP", "PUSH0", "PUSH0", "PUSH0", "CREATE", "POP", "STOP",
    "JUMPDEST",
  );
  // biome-ignore format: bytecode, one instruction stream
  const before = asm(
    "TIMESTAMP", "POP", push(9), "SLOAD", "POP", push(caller), "PUSH0", "MSTORE", push(0x40), "PUSH0", "KECCAK256", "POP",
    "ADDRESS", "EXTCODESIZE", "POP",
  );
  // biome-ignore format: bytecode, one instruction stream
  const after = asm(
    "TIMESTAMP", "POP", push(6), "SLOAD", "POP", push(caller), "PUSH0", "MSTORE", push(0x40), "PUSH0", "KECCAK256", "POP",
    "STOP",
  );
  // biome-ignore format: bytecode, one instruction stream
  const phases = entities.map(({ address, selector, gas }) =>
    asm(push(selector), push(0xe0), "SHL", "PUSH0", "MSTORE", ...callWithValue("CALL", address, 0, 0, 4, push(gas ?? 1_000_000))),
  );
  return `0x${[fallback, before, ...phases, after].map((c) => c.slice(2)).join("")}` as Hex;
}

let nextChainId = 31_337;

/** Run the stand-in EntryPoint over `entities` (address → code) with `accounts` besides; the trace's phases. */
async function trace(
  entities: {
    address: Address;
    code: Hex;
    selector?: Hex;
    gas?: number;
    storage?: Record<Hex, Hex>;
  }[],
  accounts: Prestate = {},
) {
  const prestate: Prestate = {
    [entryPoint]: {
      code: entryPointCode(
        entities.map((e, i) => ({
          address: e.address,
          selector: e.selector ?? `0x0000000${i + 1}`,
          gas: e.gas,
        })),
      ),
      storage: {
        [pad("0x09")]: pad("0x01"),
        [pad("0x05")]: pad("0x02"),
        [pad("0x06")]: pad("0x03"),
      },
    },
    [caller]: { balance: "0xffffffffffffffff" },
    ...Object.fromEntries(
      entities.map((e) => [
        e.address,
        { code: e.code, balance: "0x3e8", nonce: 1, storage: e.storage ?? {} },
      ]),
    ),
    ...accounts,
  };
  const output = await runTracedCall({
    request: { call: { from: caller, to: entryPoint, data: "0x01", gas: 10_000_000n }, entryPoint },
    prestate,
    block: {
      number: 100n,
      timestamp: 1_750_000_000n,
      coinbase: "0x00000000000000000000000000000000000000cb",
      gasLimit: 30_000_000n,
      baseFeePerGas: 1n,
      prevRandao: pad("0x00"),
    },
    // The EVM is cached per chain: a chain of its own builds the collector's wrapped opcodes for this run.
    chainId: nextChainId++,
    p256Precompile: false,
  });
  expect(output.result.reverted).toBe(false);
  return output.trace;
}

/** A phase with nothing in it, for `to` called with `selector`. */
const emptyPhase = (to: Address, selector: Hex): PhaseTrace => ({
  to,
  selector,
  opcodes: {},
  storage: {},
  transientStorage: {},
  calls: [],
  codeAccesses: [],
  creates: [],
  outOfGas: false,
});
const word = (n: number) => pad(`0x${n.toString(16)}`);

const entity: Address = "0x00000000000000000000000000000000000000a1";
const second: Address = "0x00000000000000000000000000000000000000a2";
const helper: Address = "0x00000000000000000000000000000000000000b1";
const stopCode = asm("STOP");

describe("the in-process ERC-7562 collector", () => {
  it("opens one phase per call the EntryPoint makes, with its target and selector, and counts nothing of the EntryPoint's own", async () => {
    const { phases, keccakInputs } = await trace([
      { address: entity, code: stopCode, selector: "0x11111111" },
      { address: second, code: stopCode, selector: "0x22222222" },
    ]);
    expect(phases).toEqual([emptyPhase(entity, "0x11111111"), emptyPhase(second, "0x22222222")]);
    expect(keccakInputs).toEqual([]);
  });

  it("counts each environment opcode by name, in nested calls too; GAS only when no call follows it", async () => {
    // biome-ignore format: bytecode, one instruction stream
    const code = asm(
      "TIMESTAMP", "POP", "TIMESTAMP", "POP", "NUMBER", "POP", "ORIGIN", "POP", "GASPRICE", "POP", "COINBASE", "POP", "PREVRANDAO", "POP",
      "GASLIMIT", "POP", "BASEFEE", "POP", "BLOBBASEFEE", "POP", "PUSH0", "BLOBHASH", "POP", push(1), "BLOCKHASH", "POP",
      "SELFBALANCE", "POP", "ADDRESS", "BALANCE", "POP", "GAS", "POP",
      ...callWithoutValue("STATICCALL", helper, 0, "GAS"),
      "COINBASE", "POP", "STOP",
    );
    const { phases } = await trace([{ address: entity, code }], {
      [helper]: { code: asm("TIMESTAMP", "POP", "NUMBER", "POP", "STOP") },
    });
    expect(phases[0]!.opcodes).toEqual({
      TIMESTAMP: 3,
      NUMBER: 2,
      ORIGIN: 1,
      GASPRICE: 1,
      COINBASE: 2,
      PREVRANDAO: 1,
      GASLIMIT: 1,
      BASEFEE: 1,
      BLOBBASEFEE: 1,
      BLOBHASH: 1,
      BLOCKHASH: 1,
      SELFBALANCE: 1,
      BALANCE: 1,
      GAS: 1,
    });
  });

  it("names INVALID, unassigned opcodes by number, and SELFDESTRUCT, also where a call's failure is caught; the first two halt their frame", async () => {
    const third: Address = "0x00000000000000000000000000000000000000a3";
    const { phases } = await trace(
      [
        // The entity survives its helper's INVALID (a try/catch): the opcode still counts.
        { address: entity, code: asm(...callWithoutValue("STATICCALL", helper), "STOP") },
        // What follows a halting opcode never runs, so NUMBER and TIMESTAMP are not seen.
        { address: second, code: asm({ raw: "0c" }, "NUMBER", "STOP") },
        { address: third, code: asm("PUSH0", "SELFDESTRUCT") },
      ],
      { [helper]: { code: asm("INVALID", "TIMESTAMP", "STOP") } },
    );
    expect(phases.map((p) => p.opcodes)).toEqual([
      { INVALID: 1 },
      { "0x0c": 1 },
      { SELFDESTRUCT: 1 },
    ]);
    expect(phases.map((p) => p.outOfGas)).toEqual([false, false, false]);
  });

  it("marks a phase out of gas when any frame in it runs out, not when it only reverts", async () => {
    const loop = asm("JUMPDEST", "PUSH0", "JUMP");
    const callsLoop = asm(...callWithoutValue("STATICCALL", helper, 0, push(50_000)), "STOP");
    const { phases } = await trace(
      [
        { address: entity, code: loop, gas: 60_000 },
        { address: second, code: callsLoop },
      ],
      { [helper]: { code: loop } },
    );
    expect(phases.map((p) => p.outOfGas)).toEqual([true, true]);
    const reverts = await trace([{ address: entity, code: asm("PUSH0", "PUSH0", "REVERT") }]);
    expect(reverts.phases[0]!.outOfGas).toBe(false);
  });

  it("records storage per contract and slot: read or written, and the value a slot held when read first", async () => {
    const bare: Address = "0x00000000000000000000000000000000000000b2";
    // biome-ignore format: bytecode, one instruction stream
    const code = asm(
      push(1), "SLOAD", "POP", // read first: firstValue from the prestate
      push(2), push(1), "SSTORE",
      push(3), push(2), "SSTORE", // written first: no firstValue
      push(2), "SLOAD", "POP",
      push(8), "SLOAD", "POP", // not in the prestate: 0
      push(3), "TLOAD", "POP",
      push(1), push(4), "TSTORE",
      ...callWithoutValue("STATICCALL", helper),
      ...callWithoutValue("STATICCALL", bare),
      ...callWithValue("CALL", entryPoint, 0),
      "STOP",
    );
    const { phases } = await trace([{ address: entity, code, storage: { [word(1)]: word(7) } }], {
      [helper]: { code: asm(push(1), "SLOAD", "POP", "STOP"), storage: { [word(1)]: word(0x2a) } },
      [bare]: { code: asm(push(1), "SLOAD", "POP", "STOP") },
    });
    expect(phases[0]!.storage).toEqual({
      [entity]: {
        [word(1)]: { read: true, write: true, firstValue: word(7) },
        [word(2)]: { read: true, write: true },
        [word(8)]: { read: true, write: false, firstValue: word(0) },
      },
      [helper]: { [word(1)]: { read: true, write: false, firstValue: word(0x2a) } },
      [bare]: { [word(1)]: { read: true, write: false, firstValue: word(0) } },
      // The EntryPoint's own slot, read while the phase is open (its rules are OP-05x's).
      [entryPoint]: { [word(5)]: { read: true, write: false, firstValue: word(2) } },
    });
    expect(phases[0]!.transientStorage).toEqual({
      [entity]: {
        [word(3)]: { read: true, write: false, firstValue: word(0) },
        [word(4)]: { read: false, write: true },
      },
    });
    expect(phases[0]!.opcodes).toEqual({});
  });

  it("keeps KECCAK256 inputs of a word or more that start with 12 zero bytes (a mapping key), in phases only", async () => {
    const key: Address = "0x1234567890123456789012345678901234567890";
    // biome-ignore format: bytecode, one instruction stream
    const code = asm(
      push(key), "PUSH0", "MSTORE", push(3), push(0x20), "MSTORE",
      push(0x40), "PUSH0", "KECCAK256", "POP", // key and slot
      push(0x20), "PUSH0", "KECCAK256", "POP", // the key alone
      push(0x1f), "PUSH0", "KECCAK256", "POP", // under a word
      push(`0xff${"00".repeat(31)}`), push(0x40), "MSTORE", push(0x20), push(0x40), "KECCAK256", "POP", // no address
      push(0x40), push(0x1000), "KECCAK256", "POP", // past the end of memory: zeros
      "STOP",
    );
    const { keccakInputs } = await trace([{ address: entity, code }]);
    expect(keccakInputs).toEqual([
      `${pad(key)}${word(3).slice(2)}`,
      pad(key),
      pad("0x00", { size: 64 }),
    ]);
  });

  it("records calls: kind, caller, target, value, the first 36 bytes of input and the target's code", async () => {
    const target: Address = "0x00000000000000000000000000000000000000b2";
    const delegated: Address = "0x00000000000000000000000000000000000000b3";
    // biome-ignore format: bytecode, one instruction stream
    const code = asm(
      push(`0x${"11".repeat(32)}`), "PUSH0", "MSTORE", push(`0x${"22".repeat(32)}`), push(0x20), "MSTORE",
      ...callWithValue("CALL", target, 5, 0, 0x40),
      ...callWithValue("CALLCODE", target, 0, 0, 4),
      ...callWithoutValue("DELEGATECALL", target),
      push(0), push(0), push(4), push(0x20), push(target), push(100_000), "STATICCALL", "POP", // input from offset 0x20
      // Dirty high bits above the address, as the EVM ignores them.
      ...callWithoutValue("STATICCALL", `0xffff${"00".repeat(18)}0100`),
      ...callWithoutValue("STATICCALL", delegated),
      "STOP",
    );
    const { phases } = await trace([{ address: entity, code }], {
      [target]: { code: stopCode },
      [delegated]: { code: `0xef0100${target.slice(2)}` },
    });
    expect(phases[0]!.calls).toEqual([
      {
        type: "CALL",
        from: entity,
        to: target,
        value: 5n,
        input: `0x${"11".repeat(32)}22222222`,
        code: "contract",
      },
      {
        type: "CALLCODE",
        from: entity,
        to: target,
        value: 0n,
        input: "0x11111111",
        code: "contract",
      },
      { type: "DELEGATECALL", from: entity, to: target, value: 0n, input: "0x", code: "contract" },
      {
        type: "STATICCALL",
        from: entity,
        to: target,
        value: 0n,
        input: "0x22222222",
        code: "contract",
      },
      {
        type: "STATICCALL",
        from: entity,
        to: "0x0000000000000000000000000000000000000100",
        value: 0n,
        input: "0x",
        code: "none",
      },
      {
        type: "STATICCALL",
        from: entity,
        to: delegated,
        value: 0n,
        input: "0x",
        code: "delegated",
      },
    ]);
  });

  it("calls only a 23-byte 0xef0100 designator an EIP-7702 account", async () => {
    const nearMisses: Hex[] = [
      `0x600100${"11".repeat(20)}`, // 23 bytes, not 0xef…
      `0xef0200${"11".repeat(20)}`,
      `0xef0101${"11".repeat(20)}`,
      `0xef0100${"11".repeat(21)}`, // 24 bytes
      `0xef0100${"11".repeat(20)}`, // the designator
    ];
    const targets = nearMisses.map(
      (_, i) => `0x00000000000000000000000000000000000000c${i + 1}` as Address,
    );
    // biome-ignore format: bytecode, one instruction stream
    const code = asm(...targets.flatMap((t) => [push(t), "EXTCODESIZE", "POP"] as const), "STOP");
    const { phases } = await trace(
      [{ address: entity, code }],
      Object.fromEntries(targets.map((t, i) => [t, { code: nearMisses[i] }])),
    );
    expect(phases[0]!.codeAccesses.map((a) => a.code)).toEqual([
      "contract",
      "contract",
      "contract",
      "contract",
      "delegated",
    ]);
  });

  it("records code accesses, with whether ISZERO follows", async () => {
    const contract: Address = "0x00000000000000000000000000000000000000b2";
    const delegated: Address = "0x00000000000000000000000000000000000000b3";
    const empty: Address = "0x00000000000000000000000000000000000000b4";
    // biome-ignore format: bytecode, one instruction stream
    const code = asm(
      push(contract), "EXTCODESIZE", "ISZERO", "POP",
      push(empty), "EXTCODESIZE", "POP",
      push(delegated), "EXTCODEHASH", "POP",
      push(4), "PUSH0", "PUSH0", push(contract), "EXTCODECOPY",
      "STOP",
    );
    const { phases } = await trace([{ address: entity, code }], {
      [contract]: { code: stopCode },
      [delegated]: { code: `0xef0100${contract.slice(2)}` },
      [empty]: { balance: "0x1" },
    });
    expect(phases[0]!.codeAccesses).toEqual([
      {
        opcode: "EXTCODESIZE",
        from: entity,
        address: contract,
        code: "contract",
        thenIszero: true,
      },
      { opcode: "EXTCODESIZE", from: entity, address: empty, code: "none", thenIszero: false },
      {
        opcode: "EXTCODEHASH",
        from: entity,
        address: delegated,
        code: "delegated",
        thenIszero: false,
      },
      {
        opcode: "EXTCODECOPY",
        from: entity,
        address: contract,
        code: "contract",
        thenIszero: false,
      },
    ]);
  });

  it("records CREATE and CREATE2 with the address created, none when creation fails", async () => {
    // biome-ignore format: bytecode, one instruction stream
    const code = asm(
      "PUSH0", "PUSH0", "PUSH0", "CREATE", "POP",
      push(7), "PUSH0", "PUSH0", "PUSH0", "CREATE2", "POP",
      push("0x5f5ffd"), "PUSH0", "MSTORE", push(3), push(29), "PUSH0", "CREATE", "POP", // init code that reverts
      push("0x6001545000"), "PUSH0", "MSTORE", push(5), push(27), "PUSH0", "CREATE", "POP", // init code that reads slot 1
      "STOP",
    );
    const { phases } = await trace([{ address: entity, code }]);
    const reader = phases[0]!.creates[3]!.address!;
    expect(phases[0]!.storage[reader]).toEqual({
      [word(1)]: { read: true, write: false, firstValue: word(0) },
    });
    expect(phases[0]!.creates).toEqual([
      {
        opcode: "CREATE",
        from: entity,
        address: getContractAddress({ from: entity, nonce: 1n }).toLowerCase(),
      },
      {
        opcode: "CREATE2",
        from: entity,
        address: getContractAddress({
          opcode: "CREATE2",
          from: entity,
          salt: pad("0x07"),
          bytecodeHash: keccak256("0x"),
        }).toLowerCase(),
      },
      { opcode: "CREATE", from: entity, address: undefined },
      { opcode: "CREATE", from: entity, address: reader },
    ]);
  });
});
