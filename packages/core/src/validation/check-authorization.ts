import { isAddressEqual } from "viem";
import { recoverAuthorizationAddress } from "viem/utils";
import { InvalidParamsError } from "../errors/errors.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import { isUserOperationV06, type UserOperation } from "../userop/types.ts";

const field = "eip7702Auth";

/**
 * An operation's EIP-7702 authorization must delegate its sender, here and now: signed by the
 * sender, for this chain (or any, chain id 0), at the sender's current nonce. Otherwise the
 * bundle transaction would carry an authorization the chain skips, and the operation would fail
 * there (AA20): it is refused at once (-32602). A stub authorization, as clients send while
 * estimating, is refused here and accepted by estimation.
 */
export async function checkAuthorization(client: ChainClient, chainId: number, op: UserOperation): Promise<void> {
  if (isUserOperationV06(op) || !op.authorization) return;
  const authorization = op.authorization;
  if (authorization.chainId !== 0 && authorization.chainId !== chainId) {
    throw new InvalidParamsError(field, `is for chain ${authorization.chainId}, not ${chainId}`);
  }
  let authority: string;
  try {
    authority = await recoverAuthorizationAddress({ authorization });
  } catch {
    throw new InvalidParamsError(field, "has a signature that recovers no address");
  }
  if (!isAddressEqual(authority as `0x${string}`, op.sender)) {
    throw new InvalidParamsError(field, `is signed by ${authority}, not by the sender ${op.sender}: sign it with the sender's key`);
  }
  const nonce = await client.getTransactionCount({ address: op.sender });
  if (authorization.nonce !== nonce) {
    throw new InvalidParamsError(field, `has nonce ${authorization.nonce}; the sender's account nonce is ${nonce}`);
  }
}
