import { type Chain, type Client, encodeFunctionData, type JsonRpcAccount, type LocalAccount, type Transport } from "viem";
import {
  entryPoint06Abi,
  entryPoint07Abi,
  entryPoint08Abi,
  entryPoint09Abi,
  getUserOperationHash,
  type SmartAccount,
  toSmartAccount,
} from "viem/account-abstraction";
import { readContract } from "viem/actions";
import { CANONICAL_DEPLOYMENTS, type EntryPointVersion } from "./addresses.ts";
import { loadArtifact } from "./artifacts.ts";

export interface ToSimpleAccountParameters {
  /** A client of the chain the account lives on (must have `chain` set). */
  client: Client;
  /** The key that owns the account. */
  owner: LocalAccount;
  version: EntryPointVersion;
  /** Factory salt; different salts give different accounts of one owner. Default 0. */
  salt?: bigint;
}

const entryPointAbis = { "0.6": entryPoint06Abi, "0.7": entryPoint07Abi, "0.8": entryPoint08Abi, "0.9": entryPoint09Abi } as const;

/**
 * The reference `SimpleAccount` of each EntryPoint release as a viem `SmartAccount`, created
 * counterfactually by the canonical `SimpleAccountFactory`. viem ships no SimpleAccount, and
 * tests, examples and benchmarks all need one: v0.6/v0.7 sign the userOpHash as a personal
 * message, v0.8 and v0.9 sign the raw EIP-712 hash.
 */
export function toSimpleAccount(parameters: ToSimpleAccountParameters): Promise<SmartAccount> {
  const { client, owner, version, salt = 0n } = parameters;
  const deployment = CANONICAL_DEPLOYMENTS[version];
  const factory = { address: deployment.simpleAccountFactory, abi: loadArtifact(version, "SimpleAccountFactory").abi };
  const accountAbi = loadArtifact(version, "SimpleAccount").abi;
  const entryPoint = { address: deployment.entryPoint, abi: entryPointAbis[version], version } as const;

  return toSmartAccount({
    // viem's smart accounts take a client whose own account, if any, is not a smart account.
    client: client as Client<Transport, Chain | undefined, JsonRpcAccount | LocalAccount | undefined>,
    entryPoint,
    async encodeCalls(calls) {
      if (calls.length !== 1) throw new Error("this SimpleAccount adapter sends one call per operation");
      const [call] = calls;
      return encodeFunctionData({ abi: accountAbi, functionName: "execute", args: [call!.to, call!.value ?? 0n, call!.data ?? "0x"] });
    },
    async getAddress() {
      return (await readContract(client, { ...factory, functionName: "getAddress", args: [owner.address, salt] })) as `0x${string}`;
    },
    async getFactoryArgs() {
      return {
        factory: factory.address,
        factoryData: encodeFunctionData({ abi: factory.abi, functionName: "createAccount", args: [owner.address, salt] }),
      };
    },
    async getStubSignature() {
      return "0xfffffffffffffffffffffffffffffff0000000000000000000000000000000007aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1c";
    },
    async signMessage({ message }) {
      return owner.signMessage({ message });
    },
    async signTypedData(typedData) {
      return owner.signTypedData(typedData);
    },
    async signUserOperation(userOperation) {
      const { chainId = client.chain!.id, ...op } = userOperation;
      const hash = getUserOperationHash({
        chainId,
        entryPointAddress: entryPoint.address,
        entryPointVersion: version,
        userOperation: { ...op, sender: await this.getAddress() },
      });
      return version === "0.6" || version === "0.7" ? owner.signMessage({ message: { raw: hash } }) : owner.sign!({ hash });
    },
  });
}
