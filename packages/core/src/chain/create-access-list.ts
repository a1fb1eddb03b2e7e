import type { AccessList, Address, Hex } from "viem";
import type { ChainClient } from "../ports/chain-client.ts";

/** An EIP-7702 authorization as nodes take it in a call: hex quantities. */
export interface RpcAuthorization {
  address: Address;
  chainId: Hex;
  nonce: Hex;
  yParity: Hex;
  r: Hex;
  s: Hex;
}

/** A call as `eth_createAccessList` and `eth_estimateGas` take it. */
export interface RpcCallRequest {
  from: Address;
  to: Address;
  data: Hex;
  authorizationList?: RpcAuthorization[];
}

/** `eth_createAccessList`'s answer: the list, the gas the call uses with it, and the node's error when the call fails. */
export interface CreateAccessListResult {
  accessList: AccessList;
  gasUsed: Hex;
  error?: string | undefined;
}

/** `eth_createAccessList` of `call` on the latest block, in the node's form. */
export function createAccessList(
  client: ChainClient,
  call: RpcCallRequest,
): Promise<CreateAccessListResult> {
  return client.request<{
    Parameters: [call: RpcCallRequest, block: "latest"];
    ReturnType: CreateAccessListResult;
  }>({
    method: "eth_createAccessList",
    params: [call, "latest"],
  });
}
