import { type Address, type Hash, isAddressEqual, parseAbi, size } from "viem";
import { bundleGasOf } from "../bundle/bundle-gas.ts";
import type { EntryPoint, EntryPointRegistry } from "../entrypoint/registry.ts";
import { BundleGasTooLargeError, DuplicateUserOperationError, FeeBelowBaseFeeError, PaymasterDepositError } from "../errors/errors.ts";
import { enforceGasPrice } from "../gas/enforce-gas-price.ts";
import type { FeeOracle } from "../gas/fee-oracle.ts";
import type { PreVerificationGasConfig } from "../userop/pre-verification-gas.ts";
import type { ChainClient } from "../ports/chain-client.ts";
import type { Clock } from "../ports/clock.ts";
import type { Logger } from "../ports/logger.ts";
import type { StateOverride } from "../ports/eth-call.ts";
import type { Simulator } from "../ports/simulator.ts";
import { type MempoolEntry, type MempoolStore, readmissibleStatuses } from "../ports/mempool-store.ts";
import type { MempoolPolicy } from "../ports/mempool-policy.ts";
import type { Reputation } from "../reputation/reputation.ts";
import { isStaked } from "../reputation/stake.ts";
import type { StatusListener } from "../status/status-change.ts";
import { getUserOperationHash } from "../userop/hash.ts";
import { maxCostOf } from "../userop/max-cost.ts";
import { factoryOf, paymasterOf, type UserOperation } from "../userop/types.ts";
import { checkAuthorization } from "../validation/check-authorization.ts";
import { deploysSender } from "../validation/deployment-override.ts";
import { precheckUserOperation } from "../validation/prechecks.ts";
import { refuseDelegatedEntities, refuseSecondDelegate } from "../validation/rules/delegation-rules.ts";
import { refuseMultipleRoles, refuseUnstakedContext } from "../validation/rules/entity-rules.ts";
import { ignoresFactory, refuseRedundantFactory, withQueuedNonce } from "../validation/queued-nonce.ts";
import { needsHashDelegate, readHashDelegate } from "../validation/hash-delegate.ts";
import { validationFacts } from "../validation/trace/validation-facts.ts";
import { validateUserOperation } from "../validation/validate-user-operation.ts";
import type { BundlerSettings } from "./settings.ts";

export interface AdmissionContext {
  client: ChainClient;
  /** Runs validation: traced and held to ERC-7562 in safe mode, simulation only in unsafe mode. */
  simulator: Simulator;
  chainId: number;
  store: MempoolStore;
  policy: MempoolPolicy;
  reputation: Reputation;
  entryPoints: EntryPointRegistry;
  feeOracle: FeeOracle;
  clock: Clock;
  logger: Logger;
  emit: StatusListener;
  settings: BundlerSettings;
  /** The most operation gas one bundle holds (`bundling.maxGas`, or what the block holds). */
  maxBundleGas: bigint;
  preVerificationGas?: PreVerificationGasConfig | undefined;
  /** preVerificationGas an L2 requires on top, for an operation's L1 data fee; none on L1. */
  l1DataGas?: ((entryPoint: EntryPoint, op: UserOperation) => Promise<bigint>) | undefined;
}

/**
 * Admission: prechecks, reputation, simulation, fee floor and the policy, then the operation is
 * stored. Resolves with its hash only once it is durable. An operation that could never fit a
 * bundle is refused here (`BundleGasTooLargeError`), not left to stall the pool.
 */
export async function admitUserOperation(context: AdmissionContext, op: UserOperation, entryPointAddress: Address): Promise<Hash> {
  const { store, settings, clock } = context;
  const { reputation: stakeRequirement } = settings;
  const entryPoint = context.entryPoints.get(entryPointAddress);
  precheckUserOperation(op, { validationGasLimit: settings.gas.validationGasLimit, maxUserOperationBytes: settings.validation.maxUserOperationBytes });
  const bundleGas = bundleGasOf(op);
  if (bundleGas > context.maxBundleGas) throw new BundleGasTooLargeError(bundleGas, context.maxBundleGas);
  // Each await below is taken only when there is something to wait for: most operations need no
  // chain read before simulation, and each await lets other admissions run in between.
  const delegate = needsHashDelegate(op, entryPoint) ? await readHashDelegate(context.client, op, entryPoint) : undefined;
  const userOpHash = getUserOperationHash(op, entryPoint, context.chainId, delegate);
  const known = await store.get(userOpHash);
  if (known && !readmissibleStatuses.includes(known.status)) throw new DuplicateUserOperationError(userOpHash);
  const safe = context.simulator.mode === "safe";
  /** What the sender's pooled operations refuse: checked early, where it is the telling error, and again at insert. */
  const refuseOnPool = (pooled: readonly MempoolEntry[]) => {
    if (safe) refuseSecondDelegate(pooled, op);
    refuseRedundantFactory(pooled, op);
  };
  const checks = [
    context.reputation.check(entryPoint.address, op),
    op.authorization && checkAuthorization(context.client, context.chainId, op),
    safe && hasNonAccountEntity(op) && refuseDelegatedEntities(context.client, op),
    (op.authorization || deploysSender(op)) && store.listBySender(entryPoint.address, op.sender).then(refuseOnPool),
  ].filter((check): check is Promise<void> => Boolean(check));
  if (checks.length === 1) await checks[0];
  else await Promise.all(checks);
  const nowSeconds = BigInt(Math.floor(clock.now() / 1000));
  const validate = (stateOverride?: StateOverride) =>
    validateUserOperation(
      {
        simulator: context.simulator,
        rules: { ...stakeRequirement, p256Precompile: settings.validation.p256Precompile, maxPaymasterContextBytes: settings.validation.maxPaymasterContextBytes },
        nowSeconds,
        blockNumber: () => context.client.getBlockNumber({ cacheTime: 0 }),
        preVerificationGas: context.preVerificationGas,
        l1DataGas: context.l1DataGas && ((o: UserOperation) => context.l1DataGas!(entryPoint, o)),
        stateOverride,
      },
      entryPoint,
      op,
    );
  const [gasPrice, validation] = await Promise.all([context.feeOracle.getGasPrice(), withQueuedNonce(context, entryPoint, op, validate)]);
  if (settings.gas.enforceGasPrice) enforceGasPrice(op, gasPrice, settings.gas.enforceGasPriceThresholdPercent);
  if (op.maxFeePerGas < gasPrice.baseFeePerGas) throw new FeeBelowBaseFeeError(op.maxFeePerGas, gasPrice.baseFeePerGas);
  if (validation.trace) await refuseMultipleRoles(store, entryPoint.address, op);
  const staked = {
    account: isStaked(validation.sender, stakeRequirement),
    factory: isStaked(validation.factory, stakeRequirement),
    paymaster: isStaked(validation.paymasterStake, stakeRequirement),
  };
  // UREP-020 concerns factories and paymasters only: an operation naming neither has nothing to count.
  if (hasNonAccountEntity(op)) await context.reputation.checkUnstakedAllowance(entryPoint.address, op, staked);
  if (validation.trace) refuseUnstakedContext(op, validation, stakeRequirement);
  const stakedRoles = (["account", "factory", "paymaster"] as const).filter((role) => staked[role]);
  if (paymasterOf(op)) await refuseUnfundedPaymaster(context, entryPoint.address, op);
  const entry = {
    userOpHash,
    entryPoint: entryPoint.address,
    entryPointVersion: entryPoint.version,
    userOperation: op,
    receivedAt: clock.now(),
    ...(validation.trace ? { validation: validationFacts(validation.trace, stakedRoles) } : {}),
    ...(validation.paymasterContext !== "0x" ? { paymasterContextSize: size(validation.paymasterContext) } : {}),
  };
  // The sender's rules are decided on its operations as the store holds them when this one goes in.
  // v0.9 ignores the factory of a sender that exists: such a factory is not counted for reputation.
  const deployed = entryPoint.version === "0.9" && deploysSender(op) && (await context.client.getCode({ address: op.sender })) !== undefined;
  let factoryIgnored = false;
  const { replaces } = await store.admit(entry, (senderOperations) => {
    refuseOnPool(senderOperations);
    factoryIgnored = ignoresFactory(entryPoint.version, senderOperations, op, deployed);
    return context.policy.admit({ entry, senderOperations, senderStaked: staked.account });
  });
  if (replaces) context.emit({ userOpHash: replaces.userOpHash, status: "dropped", reason: `replaced by ${userOpHash}` });
  await context.reputation.admitted(entryPoint.address, op, { senderStaked: staked.account, replaced: replaces?.userOperation, factoryIgnored });
  context.emit({ userOpHash, status: "pending" });
  context.logger.debug("operation accepted", { userOpHash, sender: op.sender, entryPoint: entryPoint.address });
  return userOpHash;
}

/** Whether `op` names a factory or a paymaster (the `0x7702` marker is no factory): an entity besides its account. */
function hasNonAccountEntity(op: UserOperation): boolean {
  const factory = factoryOf(op);
  return (factory !== undefined && factory.length === 42) || paymasterOf(op) !== undefined;
}

const depositAbi = parseAbi(["function balanceOf(address account) view returns (uint256)"]);

/**
 * A paymaster's deposit must cover the most its operations not yet on chain can cost, this one
 * included (`PaymasterDepositError`, AA31): otherwise the last of them fails in its bundle (AA31)
 * and costs the bundler.
 * An operation this one replaces is not counted twice.
 */
async function refuseUnfundedPaymaster(context: Pick<AdmissionContext, "client" | "store">, entryPoint: Address, op: UserOperation) {
  const paymaster = paymasterOf(op);
  if (!paymaster) return;
  const [deposit, pooled] = await Promise.all([
    context.client.readContract({ address: entryPoint, abi: depositAbi, functionName: "balanceOf", args: [paymaster] }),
    context.store.listByEntity(entryPoint, paymaster),
  ]);
  const sponsored = pooled
    .filter(({ userOperation: other }) => paymasterOf(other) !== undefined && isAddressEqual(paymasterOf(other)!, paymaster))
    .filter(({ userOperation: other }) => !(isAddressEqual(other.sender, op.sender) && other.nonce === op.nonce));
  const required = sponsored.reduce((sum, entry) => sum + maxCostOf(entry.userOperation), maxCostOf(op));
  if (deposit < required) throw PaymasterDepositError.inPool(paymaster, { deposit, required, pooledOperations: sponsored.length });
}
