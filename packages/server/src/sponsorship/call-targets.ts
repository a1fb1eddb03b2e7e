import { type Address, decodeFunctionData, getAddress, type Hex, parseAbi } from "viem";

/**
 * The call shapes of the reference `SimpleAccount` of each EntryPoint release (also those of
 * LightAccount and other accounts that copied them). Their selectors differ, so one table
 * decodes all versions.
 */
const simpleAccountCalls = parseAbi([
  "function execute(address dest, uint256 value, bytes func)",
  "function executeBatch(address[] dest, bytes[] func)",
  "function executeBatch(address[] dest, uint256[] value, bytes[] func)",
  "function executeBatch((address target, uint256 value, bytes data)[] calls)",
]);

/** Decodes an account's `callData` into the addresses it calls; undefined when the shape is unknown. */
export type CallTargetDecoder = (callData: Hex) => readonly Address[] | undefined;

/**
 * The addresses a SimpleAccount-style `callData` calls (`execute`, or `executeBatch` of v0.6,
 * v0.7 or v0.8), checksummed; undefined for any other `callData`, empty `0x` included.
 */
export const simpleAccountCallTargets: CallTargetDecoder = (callData) => {
  let decoded: ReturnType<typeof decodeFunctionData<typeof simpleAccountCalls>>;
  try {
    decoded = decodeFunctionData({ abi: simpleAccountCalls, data: callData });
  } catch {
    return undefined;
  }
  const [first] = decoded.args;
  if (decoded.functionName === "execute") return [getAddress(first as Address)];
  return (first as readonly (Address | { target: Address })[]).map((call) =>
    getAddress(typeof call === "string" ? call : call.target),
  );
};
