import { type Hex, toHex } from "viem";
import { mnemonicToAccount } from "viem/accounts";

/** Anvil's well-known test mnemonic. Its keys are public: never use them on a real network. */
export const DEVNET_MNEMONIC = "test test test test test test test test test test test junk";

let parentKey: ReturnType<ReturnType<typeof mnemonicToAccount>["getHdKey"]> | undefined;
const derived: Hex[] = [];

/**
 * Private keys of the first `count` accounts of {@link DEVNET_MNEMONIC} (path m/44'/60'/0'/0/i),
 * i.e. the accounts anvil funds. Derived once from the parent node and cached, because deriving each
 * key from the mnemonic separately costs a full PBKDF2 run (~50 ms).
 */
export function deriveDevnetKeys(count: number): Hex[] {
  if (derived.length < count) {
    parentKey ??= mnemonicToAccount(DEVNET_MNEMONIC, { path: "m/44'/60'/0'/0" }).getHdKey();
    for (let i = derived.length; i < count; i++) {
      const { privateKey } = parentKey.deriveChild(i);
      if (privateKey === null) throw new Error(`could not derive devnet key #${i}`);
      derived.push(toHex(privateKey));
    }
  }
  return derived.slice(0, count);
}
