import { MempoolRejectionError, ReplacementUnderpricedError, SenderLimitError } from "../errors/errors.ts";
import type { MempoolPolicy } from "../ports/mempool-policy.ts";

export interface Erc7562AdmissionOptions {
  /** ERC-7562 `SAME_SENDER_MEMPOOL_COUNT`: most operations an unstaked sender may have in the pool. Default 4. */
  sameSenderMempoolCount?: number;
  /** Percent by which both fees of a replacement must exceed the replaced operation's. Default 10. */
  replacementFeeBumpPercent?: number;
}

/**
 * ERC-4337 / ERC-7562 admission, shared by the shipped policies:
 * - an operation with the sender and nonce of a pending one replaces it only when both
 *   `maxFeePerGas` and `maxPriorityFeePerGas` are at least 10% higher; one already being bundled
 *   or sent cannot be replaced;
 * - an unstaked sender may have at most 4 operations in the pool (UREP-010; staked senders are
 *   limited by reputation instead).
 */
export function erc7562Admission(options: Erc7562AdmissionOptions = {}): MempoolPolicy["admit"] {
  const sameSenderMempoolCount = options.sameSenderMempoolCount ?? 4;
  const bump = BigInt(100 + (options.replacementFeeBumpPercent ?? 10));
  // Integer division, as the reference bundler and clients compute a bump (`fee * 110n / 100n`).
  const bumped = (fee: bigint) => (fee * bump) / 100n;

  return function admit({ entry, senderOperations, senderStaked }) {
    const op = entry.userOperation;
    const same = senderOperations.find((e) => e.userOperation.nonce === op.nonce);
    if (same) {
      if (same.status !== "pending") {
        throw new MempoolRejectionError(
          `an operation with this sender and nonce is already ${same.status === "submitted" ? "in a bundle transaction" : "being bundled"} and cannot be replaced`,
          { replacing: same.userOpHash },
        );
      }
      const old = same.userOperation;
      if (op.maxFeePerGas < bumped(old.maxFeePerGas) || op.maxPriorityFeePerGas < bumped(old.maxPriorityFeePerGas)) {
        throw new ReplacementUnderpricedError(same.userOpHash, bumped(old.maxFeePerGas), bumped(old.maxPriorityFeePerGas));
      }
      return { replaces: same };
    }
    if (!senderStaked && senderOperations.length >= sameSenderMempoolCount) {
      throw new SenderLimitError(op.sender, sameSenderMempoolCount);
    }
    return { replaces: undefined };
  };
}
