import type { Address, Hex } from "viem";

/** One storage slot an entity touched: whether it read it, wrote it, and the value it held before the validation. */
export interface SlotAccess {
  read: boolean;
  write: boolean;
  /** The slot's value before the validation touched it (32-byte hex), when it was read first. */
  firstValue?: Hex | undefined;
}

/** Slots touched per contract (lower-case address → 32-byte slot → access). */
export type StorageAccesses = Record<Address, Record<Hex, SlotAccess>>;

/** What the code at an address was when it was used. */
export type CodeKind = "none" | "contract" | "delegated";

/** A `*CALL` made inside a phase. */
export interface TracedCall {
  type: "CALL" | "CALLCODE" | "DELEGATECALL" | "STATICCALL";
  /** The contract whose code made the call (its storage context). */
  from: Address;
  to: Address;
  value: bigint;
  /** The first 36 bytes of the call's input (selector and first word), `0x` when empty. */
  input: Hex;
  /** The target's code when called. */
  code: CodeKind;
}

/** An `EXTCODESIZE`, `EXTCODEHASH` or `EXTCODECOPY` inside a phase. */
export interface TracedCodeAccess {
  opcode: "EXTCODESIZE" | "EXTCODEHASH" | "EXTCODECOPY";
  from: Address;
  address: Address;
  code: CodeKind;
  /** The next opcode is `ISZERO` (the `EXTCODESIZE ISZERO` pattern of OP-051). */
  thenIszero: boolean;
}

/** A `CREATE` or `CREATE2` inside a phase. */
export interface TracedCreate {
  opcode: "CREATE" | "CREATE2";
  /** The contract that ran the opcode. */
  from: Address;
  /** The address it created (lower case); undefined when creation failed before an address was known. */
  address: Address | undefined;
}

/**
 * Everything ERC-7562 looks at in one call the EntryPoint makes during validation (a phase:
 * deployment through the SenderCreator, the account's `validateUserOp`, the paymaster's
 * `validatePaymasterUserOp`), including every call nested under it. Opcodes the EntryPoint's own
 * code runs are not counted.
 */
export interface PhaseTrace {
  /** The contract the EntryPoint called (lower case). */
  to: Address;
  /** The 4-byte selector the EntryPoint called it with, `0x` when none. */
  selector: Hex;
  /** Opcode name → times run. `GAS` right before a `*CALL` (OP-012) is not counted; CREATE/CREATE2 are in `creates`. */
  opcodes: Record<string, number>;
  storage: StorageAccesses;
  /** `TLOAD`/`TSTORE` accesses, which ERC-7562 treats like storage (OP-070). */
  transientStorage: StorageAccesses;
  calls: TracedCall[];
  codeAccesses: TracedCodeAccess[];
  creates: TracedCreate[];
  /** Some frame in the phase ran out of gas (OP-020). */
  outOfGas: boolean;
}

/** The normalised trace of one validation: what every `ValidationTracer` returns, whichever way it collected it. */
export interface ValidationTrace {
  phases: PhaseTrace[];
  /**
   * `KECCAK256` inputs of the whole validation that start with a 32-byte word holding an address
   * (a mapping key), from which associated storage is derived.
   */
  keccakInputs: Hex[];
  /** keccak256 of the code of every contract the validation used (lower-case address → hash), for COD-010. */
  codeHashes: Record<Address, Hex>;
}
