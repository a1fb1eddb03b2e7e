import { preconfirmationTypedData } from "@bundlekit/core";
import { type Hex, keccak256, parseGwei, toHex } from "viem";
import { privateKeyToAccount, sign } from "viem/accounts";

/** A fixed test key (anvil's first): the vectors are the same on every run. */
const key: Hex = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const entryPoint = "0x0000000071727De22E5E9d8BAf0edAc6f37da032";

/**
 * What viem makes of fixed inputs — Keccak-256 hashes, secp256k1 signatures, signed EIP-1559 and
 * EIP-7702 transactions, signed preconfirmations — for the Python builder's unit tests
 * (python/test_vectors.py), which must agree byte for byte.
 */
export async function pythonVectors() {
  const account = privateKeyToAccount(key);
  const inputs: Hex[] = ["0x", "0x61", toHex("x".repeat(135)), toHex("x".repeat(136)), toHex("y".repeat(300))];
  const digests = [keccak256("0x01"), keccak256("0x02"), `0x${"ff".repeat(32)}` as Hex];
  const transactions = [
    { chainId: 31337, nonce: 0, to: entryPoint, data: "0x765e827f" as Hex, gas: 21_000n, maxFeePerGas: parseGwei("2"), maxPriorityFeePerGas: parseGwei("1") },
    {
      chainId: 1,
      nonce: 300,
      to: entryPoint,
      data: toHex("z".repeat(70)),
      gas: 1_000_000n,
      maxFeePerGas: parseGwei("30"),
      maxPriorityFeePerGas: 0n,
      accessList: [{ address: entryPoint, storageKeys: [keccak256("0x03")] }] as const,
    },
  ];
  const authorization = await account.signAuthorization({ chainId: 31337, address: entryPoint, nonce: 7 });
  const preconfirmations = [
    { userOpHash: keccak256("0x04"), blockNumber: 436n, transactionHash: keccak256("0x05"), chainId: 31337 },
    { userOpHash: keccak256("0x06"), blockNumber: 1n, transactionHash: keccak256("0x07"), chainId: 10 },
  ];
  /** Quantities as hex, as in JSON-RPC, nested lists included. */
  const hex = (value: unknown): unknown =>
    typeof value === "bigint" || typeof value === "number"
      ? toHex(value)
      : Array.isArray(value)
        ? value.map(hex)
        : typeof value === "object" && value !== null
          ? Object.fromEntries(Object.entries(value).map(([name, field]) => [name, hex(field)]))
          : value;
  return {
    key,
    address: account.address,
    keccak: inputs.map((input) => ({ input, hash: keccak256(input) })),
    signatures: await Promise.all(
      digests.map(async (hash) => {
        const { r, s, yParity } = await sign({ hash, privateKey: key });
        return { hash, r, s, yParity };
      }),
    ),
    transactions: await Promise.all(
      [
        ...transactions.map((tx) => ({ ...tx, type: "eip1559" as const })),
        { ...transactions[0]!, type: "eip7702" as const, authorizationList: [authorization] },
      ].map(async ({ type, ...tx }) => {
        const raw = await account.signTransaction({ ...tx, type } as never);
        return { tx: hex(tx), raw, hash: keccak256(raw) };
      }),
    ),
    preconfirmations: await Promise.all(
      preconfirmations.map(async ({ chainId, ...message }) => {
        // The engine's own typed data: the Python verifier must agree with what the service signs.
        const signature = await account.signTypedData(preconfirmationTypedData({ ...message, chainId, entryPoint }));
        return { ...message, blockNumber: toHex(message.blockNumber), chainId: toHex(chainId), entryPoint, signer: account.address, signature };
      }),
    ),
  };
}
