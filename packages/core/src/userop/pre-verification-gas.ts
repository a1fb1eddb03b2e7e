import { keccak256, size, stringToHex } from "viem";
import type { EntryPointVersion } from "../entrypoint/version.ts";
import type { UserOperation } from "./types.ts";
import { isUserOperationV06 } from "./types.ts";
import { measureUserOperation } from "./abi-measure.ts";

/**
 * Overheads behind `preVerificationGas`: the part of a bundle's cost no gas limit of the
 * operation covers (its share of the 21000 base fee and the EntryPoint's fixed work, and the
 * calldata it adds). Defaults follow the ERC-4337 reference bundler's mainnet calculator.
 */
export interface PreVerificationGasConfig {
  transactionGasStipend: number;
  fixedGasOverhead: number;
  /**
   * Per bundle, what each EntryPoint version's `handleOps` spends unmetered besides
   * `fixedGasOverhead` (shared like it). v0.6 and v0.7 guard `handleOps` against reentrancy in
   * storage, v0.8 and v0.9 in transient storage. Measured on the devnet (test/estimate-ceilings.test.ts):
   * without it a bundle of one operation cost its relayer 3,040 (v0.6), 2,300 (v0.7) and 160
   * (v0.8) gas more than the operation repaid.
   */
  entryPointGasOverhead: Readonly<Record<EntryPointVersion, number>>;
  perUserOpGasOverhead: number;
  perUserOpWordGasOverhead: number;
  executeUserOpGasOverhead: number;
  executeUserOpPerWordGasOverhead: number;
  standardTokenGasCost: number;
  /** EIP-7623 calldata floor (Prague): 10 gas per token. */
  floorPerTokenGasCost: number;
  tokensPerNonzeroByte: number;
  eip7702AuthGas: number;
  /** Bundle size assumed when sharing the fixed costs; 1 is safe. */
  expectedBundleSize: number;
}

export const defaultPreVerificationGasConfig: PreVerificationGasConfig = {
  transactionGasStipend: 21_000,
  fixedGasOverhead: 9_830,
  entryPointGasOverhead: { "0.6": 3_100, "0.7": 2_350, "0.8": 200, "0.9": 200 },
  perUserOpGasOverhead: 7_260,
  perUserOpWordGasOverhead: 9.5,
  executeUserOpGasOverhead: 1_610,
  executeUserOpPerWordGasOverhead: 8.2,
  standardTokenGasCost: 4,
  floorPerTokenGasCost: 10,
  tokensPerNonzeroByte: 4,
  eip7702AuthGas: 25_000,
  expectedBundleSize: 1,
};

const executeUserOpSelector = "0x8dd7712f";
const packedUserOpTypeHash = keccak256(
  stringToHex(
    "PackedUserOperation(address sender,uint256 nonce,bytes initCode,bytes callData,bytes32 accountGasLimits,uint256 preVerificationGas,bytes32 gasFees,bytes paymasterAndData)",
  ),
);

/**
 * The `preVerificationGas` an operation to the EntryPoint of `version` must carry.
 * `verificationGasUsed` is the gas its validation really used (from simulation); it matters under
 * the EIP-7623 calldata floor, where an operation that executes little must pay for its calldata
 * at the floor price.
 */
export function calculatePreVerificationGas(
  op: UserOperation,
  verificationGasUsed: bigint,
  version: EntryPointVersion,
  config: PreVerificationGasConfig = defaultPreVerificationGasConfig,
): bigint {
  // The operation as it sits in `handleOps` calldata (full bytes, not hashes), counted, not encoded.
  const measured = measureUserOperation(op, isUserOperationV06(op) ? undefined : packedUserOpTypeHash);
  const tokens = measured.zeroBytes + (measured.size - measured.zeroBytes) * config.tokensPerNonzeroByte;
  const words = measured.size / 32;

  let perOp = config.perUserOpGasOverhead;
  if (op.authorization) perOp += config.eip7702AuthGas;
  let callDataOverhead = 0;
  if (op.callData.startsWith(executeUserOpSelector)) {
    perOp += config.executeUserOpGasOverhead + config.executeUserOpPerWordGasOverhead * words;
  } else {
    callDataOverhead = Math.ceil(size(op.callData) / 32) * config.perUserOpWordGasOverhead;
  }
  const bundleShare = (config.fixedGasOverhead + config.entryPointGasOverhead[version]) / config.expectedBundleSize;
  const stipendShare = config.transactionGasStipend / config.expectedBundleSize;
  const postOpGasLimit = isUserOperationV06(op) ? 0n : (op.paymasterPostOpGasLimit ?? 0n);
  // Under EIP-7623 the transaction pays max(standard, floor); execution counts toward standard.
  const executionGasUsed = Number((op.callGasLimit + postOpGasLimit) / 10n + verificationGasUsed);
  const standard = config.standardTokenGasCost * tokens + bundleShare + perOp + callDataOverhead + executionGasUsed;
  const floor = config.floorPerTokenGasCost * tokens;
  const total = Math.round(stipendShare + Math.max(standard, floor)) - executionGasUsed;
  return BigInt(Math.max(total, 0));
}
