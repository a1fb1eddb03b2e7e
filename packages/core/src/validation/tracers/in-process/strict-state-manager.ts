import { SimpleStateManager } from "@ethereumjs/statemanager";
import { Account, type Address as EvmAddress, bytesToHex, createAddressFromString, hexToBytes } from "@ethereumjs/util";
import type { Address, Hex } from "viem";
import type { Prestate } from "../prestate.ts";
import { cachedCode } from "./code-cache.ts";

/**
 * A state manager holding exactly the node's prestate. A read of an account or slot the prestate
 * does not list (and the run did not write or create) is recorded in `missing` and answered with
 * empty state, so the caller can refuse the result instead of trusting a guess.
 */
export class StrictStateManager extends SimpleStateManager {
  /** Reads outside the prestate: `address` or `address/slot`. */
  readonly missing: string[] = [];
  private readonly knownAccounts = new Set<string>();
  private readonly knownSlots = new Set<string>();
  /** Contracts created in the run: their storage starts empty, so every slot is known. */
  private readonly created = new Set<string>();
  private loading = true;

  /** Load the prestate. Storage values are stored minimally encoded, as the EVM's SSTORE gas logic expects. */
  static async fromPrestate(prestate: Prestate): Promise<StrictStateManager> {
    const state = new StrictStateManager();
    for (const [address, entry] of Object.entries(prestate) as [Address, Prestate[Address]][]) {
      const at = createAddressFromString(address);
      const code = entry.code && entry.code !== "0x" ? cachedCode(entry.code) : undefined;
      await state.putAccount(at, new Account(BigInt(entry.nonce ?? 0), BigInt(entry.balance ?? 0), undefined, code ? hexToBytes(code.hash) : undefined));
      if (code) state.topCodeStack().set(at.toString(), code.bytes);
      for (const [slot, value] of Object.entries(entry.storage ?? {}) as [Hex, Hex][]) {
        state.knownSlots.add(slotKey(address, slot));
        const word = BigInt(value);
        if (word !== 0n) await state.putStorage(at, hexToBytes(slot), minimalBytes(word));
      }
    }
    state.loading = false;
    return state;
  }

  override async getAccount(address: EvmAddress) {
    this.requireAccount(address.toString());
    return super.getAccount(address);
  }

  override async putAccount(address: EvmAddress, account?: Account) {
    this.knownAccounts.add(address.toString());
    return super.putAccount(address, account);
  }

  override async getCode(address: EvmAddress) {
    this.requireAccount(address.toString());
    return super.getCode(address);
  }

  override async getStorage(address: EvmAddress, key: Uint8Array) {
    const at = address.toString();
    if (!this.loading && !this.created.has(at) && !this.knownSlots.has(slotKey(at, bytesToHex(key)))) {
      this.missing.push(`${at}/${bytesToHex(key)}`);
    }
    return super.getStorage(address, key);
  }

  override async putStorage(address: EvmAddress, key: Uint8Array, value: Uint8Array) {
    this.knownSlots.add(slotKey(address.toString(), bytesToHex(key)));
    return super.putStorage(address, key, value);
  }

  override async clearStorage(address: EvmAddress) {
    this.created.add(address.toString());
    return super.clearStorage(address);
  }

  private requireAccount(address: string) {
    if (!this.loading && !this.knownAccounts.has(address)) this.missing.push(address);
  }
}

function slotKey(address: string, slot: string): string {
  return `${address}/${BigInt(slot)}`;
}

function minimalBytes(word: bigint): Uint8Array {
  const hex = word.toString(16);
  return hexToBytes(`0x${hex.length % 2 ? "0" : ""}${hex}`);
}
