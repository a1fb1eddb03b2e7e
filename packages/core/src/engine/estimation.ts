import type { Address } from "viem";
import type { EntryPoint, EntryPointRegistry } from "../entrypoint/registry.ts";
import { dummySignature, type EstimateContext, estimateUserOperationGas, type GasEstimate } from "../gas/estimate-user-operation-gas.ts";
import type { StateOverride } from "../ports/eth-call.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import type { MempoolStore } from "../ports/mempool-store.ts";
import type { UserOperation } from "../userop/types.ts";
import { refuseMalleableAuthorization } from "../validation/check-authorization.ts";
import { deploysSender } from "../validation/deployment-override.ts";
import { refuseRedundantFactory, withQueuedNonce } from "../validation/queued-nonce.ts";
import { checkUserOperationSize } from "../validation/size-limits.ts";
import { mergeStateOverrides } from "../validation/state-override.ts";
import { namingPaymaster } from "../validation/validate-user-operation.ts";

export interface EstimationContext extends Omit<EstimateContext, "stateOverride" | "l1DataGas"> {
  client: ChainClient;
  store: MempoolStore;
  entryPoints: EntryPointRegistry;
  /** `validation.maxUserOperationBytes`: an operation too large to admit gets no estimate (LIM-010). */
  maxUserOperationBytes: number;
  /** preVerificationGas an L2 requires on top, for an operation's L1 data fee; none on L1. */
  l1DataGas?: ((entryPoint: EntryPoint, op: UserOperation) => Promise<bigint>) | undefined;
}

/**
 * `eth_estimateUserOperationGas`: refuse what admission would refuse before any simulation (size,
 * a malleable EIP-7702 authorization, a factory another pooled operation makes redundant), then
 * estimate on top of the caller's state override, as if the sender's queued operations had landed.
 * A failure the paymaster is blamed for names it, as at admission.
 */
export async function estimateForCaller(context: EstimationContext, op: UserOperation, entryPointAddress: Address, callerOverride?: StateOverride): Promise<GasEstimate> {
  const entryPoint = context.entryPoints.get(entryPointAddress);
  // Counted with a signature of a usual size when the caller sent none.
  checkUserOperationSize(op.signature === "0x" ? { ...op, signature: dummySignature } : op, context.maxUserOperationBytes);
  refuseMalleableAuthorization(op);
  if (deploysSender(op)) refuseRedundantFactory(await context.store.listBySender(entryPoint.address, op.sender), op);
  const l1DataGas = context.l1DataGas;
  const estimate: EstimateContext = { ...context, l1DataGas: l1DataGas && ((o: UserOperation) => l1DataGas(entryPoint, o)) };
  return withQueuedNonce(context, entryPoint, op, (queued) =>
    estimateUserOperationGas({ ...estimate, stateOverride: mergeStateOverrides(callerOverride, queued) }, entryPoint, op),
  ).catch((error: unknown) => {
    throw namingPaymaster(error, op);
  });
}
