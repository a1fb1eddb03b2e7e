import { type GenerateWorkloadParameters, generateOperations, type Workload, type WorkloadOperation } from "./workload.ts";

/**
 * A workload's operations in typed arrays, column by column: about 50 bytes an operation instead
 * of an object with three decimal strings (about 175), so that a replay of millions holds tens of
 * megabytes of workload, not hundreds. `operation(i)` gives operation `i` back as it was.
 */
export interface PackedOperations {
  readonly length: number;
  readonly at: Float64Array;
  readonly sender: Int32Array;
  readonly nonce: Int32Array;
  /** The paymaster's index, or -1 when the sender pays. */
  readonly paymaster: Int32Array;
  /** An index into `failures`, or -1 when it passes. */
  readonly failsAtBundling: Int32Array;
  readonly failures: readonly string[];
  /** 1 when its execution reverts. */
  readonly reverts: Uint8Array;
  /** A fee or gas field of operation `i` as the workload wrote it (a decimal string). */
  amount(field: AmountField, i: number): string;
  operation(i: number): WorkloadOperation;
}

/** The fields a workload writes as decimal strings. */
export type AmountField = "maxPriorityFeePerGas" | "maxFeePerGas" | "callGasLimit";
const amountFields: readonly AmountField[] = ["maxPriorityFeePerGas", "maxFeePerGas", "callGasLimit"];

/** A workload whose operations are packed. */
export type PackedWorkload = Omit<Workload, "operations"> & { operations: PackedOperations };

/** Whether `operations` are packed already. */
export function isPacked(operations: Workload["operations"] | PackedOperations): operations is PackedOperations {
  return !Array.isArray(operations);
}

/** `workload` with its operations packed; the operation objects can then be let go. */
export function packWorkload(workload: Workload): PackedWorkload {
  return { ...workload, operations: packOperations(workload.operations) };
}

/**
 * `generateWorkload`'s workload, packed as it is drawn: the operation objects are never all held at
 * once, so a workload of millions costs its typed arrays and no more.
 */
export function generatePackedWorkload(parameters: GenerateWorkloadParameters): PackedWorkload {
  const packer = createPacker(Number.isInteger(parameters.ops) && parameters.ops > 0 ? parameters.ops : 0);
  const rest = generateOperations(parameters, packer.add);
  return { ...rest, operations: packer.done() };
}

/**
 * Operations packed column by column. An amount is kept as a double when that writes it back the
 * same (every generated one, and any below 2^53); any other is kept as written, by its index.
 */
export function packOperations(operations: readonly WorkloadOperation[]): PackedOperations {
  const packer = createPacker(operations.length);
  for (const op of operations) packer.add(op);
  return packer.done();
}

/** Columns for `length` operations, filled one operation at a time. */
function createPacker(length: number) {
  const at = new Float64Array(length);
  const sender = new Int32Array(length);
  const nonce = new Int32Array(length);
  const paymaster = new Int32Array(length).fill(-1);
  const failsAtBundling = new Int32Array(length).fill(-1);
  const reverts = new Uint8Array(length);
  const amounts = Object.fromEntries(amountFields.map((field) => [field, new Float64Array(length)])) as Record<AmountField, Float64Array>;
  const written = new Map<string, string>(); // `field index` → an amount a double does not write back
  const failures: string[] = [];
  const failureIds = new Map<string, number>();
  let i = 0;
  const add = (op: WorkloadOperation) => {
    at[i] = op.at;
    sender[i] = op.sender;
    nonce[i] = op.nonce;
    if (op.paymaster !== undefined) paymaster[i] = op.paymaster;
    if (op.reverts) reverts[i] = 1;
    if (op.failsAtBundling !== undefined) {
      let id = failureIds.get(op.failsAtBundling);
      if (id === undefined) {
        id = failures.push(op.failsAtBundling) - 1;
        failureIds.set(op.failsAtBundling, id);
      }
      failsAtBundling[i] = id;
    }
    for (const field of amountFields) {
      const value = Number(op[field]);
      amounts[field][i] = value;
      if (String(value) !== op[field]) written.set(`${field} ${i}`, op[field]);
    }
    i++;
  };
  const amount = (field: AmountField, i: number) =>
    (written.size > 0 ? written.get(`${field} ${i}`) : undefined) ?? String(amounts[field][i]);
  const done = (): PackedOperations => ({
    length,
    at,
    sender,
    nonce,
    paymaster,
    failsAtBundling,
    failures,
    reverts,
    amount,
    operation(i) {
      return {
        at: at[i]!,
        sender: sender[i]!,
        nonce: nonce[i]!,
        maxPriorityFeePerGas: amount("maxPriorityFeePerGas", i),
        maxFeePerGas: amount("maxFeePerGas", i),
        callGasLimit: amount("callGasLimit", i),
        ...(paymaster[i]! >= 0 ? { paymaster: paymaster[i]! } : {}),
        ...(failsAtBundling[i]! >= 0 ? { failsAtBundling: failures[failsAtBundling[i]!]! } : {}),
        ...(reverts[i] ? { reverts: true } : {}),
      };
    },
  });
  return { add, done };
}
