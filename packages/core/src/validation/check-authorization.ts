import { isAddressEqual } from "viem";
import { recoverAuthorizationAddress } from "viem/utils";
import { InvalidAuthorizationError } from "../errors/errors.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import type { UserOperation } from "../userop/types.ts";

const field = "eip7702Auth";

/** Half the order of secp256k1: EIP-7702 takes an authorization only with `s` at most this (EIP-2). */
const secp256k1HalfOrder = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n / 2n;

/**
 * An EIP-7702 authorization with a high `s` is refused (`InvalidAuthorizationError`): the chain skips it, yet its
 * signature recovers the same signer, and the operation keeps its hash, so anyone could turn a
 * victim's authorization into a twin that is accepted, then dropped, and blocks the original.
 * Needs no chain: estimation checks it too.
 */
export function refuseMalleableAuthorization(op: UserOperation): void {
  if (!op.authorization) return;
  if (BigInt(op.authorization.s) > secp256k1HalfOrder) {
    throw new InvalidAuthorizationError(`${field}.s`, "is above secp256k1n/2, which EIP-7702 forbids: sign it again, or use n - s with yParity flipped");
  }
}

/**
 * An operation's EIP-7702 authorization must delegate its sender, here and now: signed by the
 * sender, for this chain (or any, chain id 0), at the sender's current nonce. Otherwise the
 * bundle transaction would carry an authorization the chain skips, and the operation would fail
 * there (AA20): it is refused at once (`InvalidAuthorizationError`), as is a high `s` (`refuseMalleableAuthorization`).
 * A stub authorization, as clients send while estimating, is refused here and accepted by estimation.
 */
export async function checkAuthorization(client: ChainClient, chainId: number, op: UserOperation): Promise<void> {
  if (!op.authorization) return;
  refuseMalleableAuthorization(op);
  const authorization = op.authorization;
  if (authorization.chainId !== 0 && authorization.chainId !== chainId) {
    throw new InvalidAuthorizationError(field, `is for chain ${authorization.chainId}, not ${chainId}`);
  }
  let authority: string;
  try {
    authority = await recoverAuthorizationAddress({ authorization });
  } catch {
    throw new InvalidAuthorizationError(field, "has a signature that recovers no address");
  }
  if (!isAddressEqual(authority as `0x${string}`, op.sender)) {
    throw new InvalidAuthorizationError(field, `is signed by ${authority}, not by the sender ${op.sender}: sign it with the sender's key`);
  }
  const nonce = await client.getTransactionCount({ address: op.sender });
  if (authorization.nonce !== nonce) {
    throw new InvalidAuthorizationError(field, `has nonce ${authorization.nonce}; the sender's account nonce is ${nonce}`);
  }
}
