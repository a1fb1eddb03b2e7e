import { type RelayerLease, type RelayerSigner, type SignedTransaction, serializeSigned, signedTransaction } from "@bundlekit/core";
import type { Address, Hex, TransactionSerializable } from "viem";
import { privateKeyToAddress } from "viem/accounts";
import { privateKeyProblem } from "./private-key-problem.ts";
import { signHash } from "./sign-hash.ts";

/** A relayer private key that is not 32 bytes of hex, or out of secp256k1's range. The message names its position, never the key. */
export class InvalidRelayerKeyError extends Error {
  override name = "InvalidRelayerKeyError";
  constructor(index: number, problem = "is not a 0x-prefixed 32-byte hex private key") {
    super(`relayer key #${index + 1} ${problem}`);
  }
}

/**
 * A relayer account: its address and how it signs a transaction (a viem `LocalAccount`, or one of
 * `toAccount` over a remote signer or KMS, answering hex; or a `SignedTransaction` with its bytes and hash).
 */
export interface RelayerAccount {
  readonly address: Address;
  signTransaction(transaction: TransactionSerializable): Promise<Hex | SignedTransaction>;
}

/**
 * A pool of relayers from local private keys. Each relayer is leased to one bundle at a time,
 * so a relayer's nonces never race; keys stay inside this closure, never on the signer.
 */
export function createLocalKeySigner(privateKeys: readonly string[]): RelayerSigner {
  if (privateKeys.length === 0) throw new Error("at least one relayer key is required");
  return createAccountSigner(
    privateKeys.map((key, index): RelayerAccount => {
      const problem = privateKeyProblem(key);
      if (problem) throw new InvalidRelayerKeyError(index, problem);
      const sign = (transaction: TransactionSerializable) => signTransaction(transaction, key as Hex);
      return { address: privateKeyToAddress(key as Hex), signTransaction: sign };
    }),
  );
}

/**
 * A pool of relayers from accounts that sign (local keys, a remote signer, a KMS): each is leased
 * to one bundle at a time, round-robin, so a relayer's nonces never race.
 */
export function createAccountSigner(accounts: readonly RelayerAccount[]): RelayerSigner {
  if (accounts.length === 0) throw new Error("at least one relayer account is required");
  const addresses = accounts.map((a) => a.address);
  if (new Set(addresses.map((a) => a.toLowerCase())).size !== addresses.length) throw new Error("relayer accounts must be distinct");
  const busy = new Set<number>();
  let next = 0;

  return {
    addresses,
    lease(): RelayerLease | undefined {
      // Round-robin over idle relayers, so load and fees spread across them.
      for (let tried = 0; tried < accounts.length; tried++) {
        const index = (next + tried) % accounts.length;
        if (busy.has(index)) continue;
        busy.add(index);
        next = (index + 1) % accounts.length;
        const account = accounts[index]!;
        let released = false;
        return {
          address: account.address,
          signTransaction: (transaction) => account.signTransaction(transaction),
          release() {
            if (released) return;
            released = true;
            busy.delete(index);
          },
        };
      }
      return undefined;
    },
  };
}

/**
 * What viem's `account.signTransaction` returns, with its bytes and hash (a `SignedTransaction`):
 * serialized over buffers and hashed with core's WebAssembly keccak (core's `serializeSigned`: the
 * calldata read from hex once, into the one buffer the payload is hashed in and the transaction
 * written to) and signed with libsecp256k1 (`signHash`). A bundle transaction carries tens of
 * kilobytes of calldata, and viem's hex conversions and JavaScript keccak cost more than signing;
 * its hex is written only when a submitter reads it. An EIP-4844 transaction is signed without its
 * sidecars, as viem does.
 */
async function signTransaction(transaction: TransactionSerializable, privateKey: Hex): Promise<SignedTransaction> {
  return signedTransaction(serializeSigned(transaction, (digest) => signHash(digest, privateKey)));
}
