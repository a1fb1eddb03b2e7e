import { type Address, isAddressEqual } from "viem";
import { getAddress } from "../utils/get-address.ts";
import { EntityLimitError, ReputationError } from "../errors/errors.ts";
import type { FailureReason } from "../errors/failure-reason.ts";
import { listNaming } from "../mempool/list-in-pool.ts";
import type { MempoolStore } from "../ports/mempool-store.ts";
import type { ReputationEntry, ReputationStore } from "../ports/reputation-store.ts";
import type { UserOperation } from "../userop/types.ts";
import { type Entity, type EntityRole, entitiesOf } from "../userop/entities.ts";
import { type ReputationStatus, reputationStatus } from "./reputation-status.ts";
import type { StakeRequirement } from "./stake.ts";

/** ERC-7562 THROTTLED_ENTITY_MEMPOOL_COUNT: a throttled entity may have this many operations in the mempool. */
export const throttledEntityMempoolCount = 4;
/** ERC-7562 THROTTLED_ENTITY_BUNDLE_COUNT: a throttled entity may have this many operations in one bundle. */
export const throttledEntityBundleCount = 4;
/** ERC-7562 SAME_UNSTAKED_ENTITY_MEMPOOL_COUNT: what a new unstaked factory or paymaster may have in the mempool (UREP-020). */
export const sameUnstakedEntityMempoolCount = 10;
/** ERC-7562 MAX_OPS_ALLOWED_UNSTAKED_ENTITY: the most inclusions UREP-020 credits an unstaked entity for. */
export const maxOpsAllowedUnstakedEntity = 10_000;
/** ERC-7562 BAN_OPS_SEEN_PENALTY: the `opsSeen` GREP-040 gives an entity that failed a bundle after its second validation. */
export const banOpsSeenPenalty = 10_000;

/** Addresses exempt from reputation and stake rules, per entity kind. */
export interface WhitelistedEntities {
  paymaster: readonly Address[];
  account: readonly Address[];
  factory: readonly Address[];
}
/** ERC-7562 reputation and the stake that exempts an entity from the unstaked limits (see docs/configuration.md). */
export interface ReputationSettings extends StakeRequirement {
  /** Expected inclusions are `opsSeen / minInclusionDenominator`. Default 10. */
  readonly minInclusionDenominator: number;
  /** Throttling slack. Default 10. */
  readonly throttlingSlack: number;
  /** Ban slack. Default 50. */
  readonly banSlack: number;
  /** Entities exempt from reputation and stake rules. Default none. */
  readonly whitelistedEntities: WhitelistedEntities;
}

/** A reputation entry with the status it gives. */
export interface ReputationReport extends ReputationEntry {
  status: ReputationStatus;
}

/**
 * The engine's ERC-7562 reputation rules over a `ReputationStore`: the admission check, and the
 * counting at each step of an operation's life. Stake and opcode rules are not here; they run on
 * the simulation's result and slot in next to `check`.
 */
export interface Reputation {
  /**
   * Admission (GREP-010, GREP-020): throws `ReputationError` (-32504) when an entity of `op` is
   * banned, or throttled with `throttledEntityMempoolCount` operations already in the mempool.
   * Whitelisted entities are exempt.
   */
  check(entryPoint: Address, op: UserOperation): Promise<void>;
  /**
   * `op` entered the mempool: count it as seen for its factory and paymaster, and for its sender
   * when staked (ERC-7562 limits unstaked senders by count instead). A replacement also takes
   * back the seen count of the operation it replaced (GREP-050). A factory the EntryPoint will
   * ignore (`factoryIgnored`, v0.9's `IgnoredInitCode`) is not counted.
   */
  admitted(
    entryPoint: Address,
    op: UserOperation,
    options: { senderStaked: boolean; replaced?: UserOperation; factoryIgnored?: boolean },
  ): Promise<void>;
  /**
   * UREP-020, after validation told who is staked: an unstaked factory or paymaster may have
   * `sameUnstakedEntityMempoolCount + inclusionRate × min(opsIncluded, maxOpsAllowedUnstakedEntity)`
   * operations in the mempool; `op` would be one too many: `EntityLimitError` (-32504). The
   * operation `op` replaces (same sender and nonce) is not counted. Whitelisted entities are exempt.
   */
  checkUnstakedAllowance(entryPoint: Address, op: UserOperation, staked: { factory: boolean; paymaster: boolean }): Promise<void>;
  /** `op` was included on chain: count it for its tracked entities, but not a factory the EntryPoint ignored (`factoryIgnored`). */
  included(entryPoint: Address, op: UserOperation, options?: { factoryIgnored?: boolean }): Promise<void>;
  /**
   * `op` was rejected when re-validated for a bundle, for the EntryPoint's `reason`: the entities
   * not accountable (`accountableEntity`) get their seen count back (EREP-015), so a paymaster does
   * not pay for an account's failure. `staked` names the entities staked at admission.
   */
  rejected(entryPoint: Address, op: UserOperation, failure: FailureReason, staked?: readonly EntityRole[]): Promise<void>;
  /** Every tracked entity on `entryPoint` with its status. */
  dump(entryPoint: Address): Promise<ReputationReport[]>;
  /**
   * Of `addresses` (checksummed, as `entitiesOf` gives them), those throttled on `entryPoint` (not
   * whitelisted), lower case.
   */
  throttled(entryPoint: Address, addresses: readonly Address[]): Promise<Set<string>>;
  /**
   * GREP-040: `address` (checksummed) made a bundle fail after passing its second validation:
   * `opsSeen` becomes `banOpsSeenPenalty` and `opsIncluded` 0, so it is banned.
   */
  penalize(entryPoint: Address, address: Address): Promise<void>;
}

/** Reputation for an engine: `store` holds the counters, `mempool` tells how many operations an entity has in the pool. */
export function createReputation(
  store: ReputationStore,
  mempool: MempoolStore,
  settings: ReputationSettings,
): Reputation {
  const whitelisted = (role: EntityRole, address: Address) =>
    role !== "aggregator" &&
    settings.whitelistedEntities[role].some((a) => a.toLowerCase() === address.toLowerCase());
  const anyWhitelisted = (address: Address) =>
    (["account", "factory", "paymaster"] as const).some((role) => whitelisted(role, address));
  const statusOf = (entry: ReputationEntry) =>
    anyWhitelisted(entry.address) ? "ok" : reputationStatus(entry, settings);
  const addresses = (entities: readonly Entity[]) => entities.map((e) => e.address);
  const counted = (op: UserOperation, senderStaked: boolean, factoryIgnored = false) =>
    entitiesOf(op).filter((e) => (e.role !== "account" || senderStaked) && !(e.role === "factory" && factoryIgnored));

  const inPoolWith = async (entryPoint: Address, address: Address) => (await listNaming(mempool, entryPoint, address)).length;

  return {
    async check(entryPoint, op) {
      const entities = entitiesOf(op).filter((e) => !whitelisted(e.role, e.address));
      if (entities.length === 0) return;
      const entries = await store.get(entryPoint, addresses(entities));
      for (const entity of entities) {
        const entry = entries.find((e) => e.address === entity.address);
        const status = entry ? reputationStatus(entry, settings) : "ok";
        if (status === "banned") throw new ReputationError(entity.role, entity.address, "banned");
        if (
          status === "throttled" &&
          (await inPoolWith(entryPoint, entity.address)) >= throttledEntityMempoolCount
        ) {
          throw new ReputationError(entity.role, entity.address, "throttled");
        }
      }
    },

    async checkUnstakedAllowance(entryPoint, op, staked) {
      const unstaked = entitiesOf(op).filter((e) => (e.role === "factory" || e.role === "paymaster") && !staked[e.role] && !whitelisted(e.role, e.address));
      if (unstaked.length === 0) return;
      const entries = await store.get(entryPoint, addresses(unstaked));
      for (const entity of unstaked) {
        const entry = entries.find((e) => e.address === entity.address);
        const allowed = unstakedAllowance(entry);
        const pooled = (await mempool.listByEntity(entryPoint, entity.address)).filter(
          ({ userOperation: other }) => !(isAddressEqual(other.sender, op.sender) && other.nonce === op.nonce),
        );
        if (pooled.length >= allowed) throw new EntityLimitError(entity.role, entity.address, allowed);
      }
    },

    async admitted(entryPoint, op, { senderStaked, replaced, factoryIgnored }) {
      // An unstaked sender's own operation, with no factory or paymaster, counts for nobody: no store call.
      const retracted = replaced ? addresses(counted(replaced, senderStaked)) : [];
      if (retracted.length > 0) await store.retractSeen(entryPoint, retracted);
      const seen = addresses(counted(op, senderStaked, factoryIgnored));
      if (seen.length > 0) await store.recordSeen(entryPoint, seen);
    },

    async included(entryPoint, op, options) {
      await store.recordIncluded(entryPoint, addresses(counted(op, true, options?.factoryIgnored)));
    },

    async rejected(entryPoint, op, failure, staked = []) {
      const blamed = accountableEntity(op, failure, staked);
      if (!blamed) return;
      await store.retractSeen(
        entryPoint,
        addresses(entitiesOf(op).filter((e) => e.address !== blamed.address)),
      );
    },

    async throttled(entryPoint, addresses) {
      const entries = await store.get(entryPoint, addresses);
      return new Set(entries.filter((e) => statusOf(e) === "throttled").map((e) => e.address.toLowerCase()));
    },

    async penalize(entryPoint, address) {
      if (anyWhitelisted(address)) return;
      await store.set(entryPoint, [{ address, opsSeen: banOpsSeenPenalty, opsIncluded: 0 }]);
    },

    async dump(entryPoint) {
      const entries = await store.list(getAddress(entryPoint));
      return entries.map((entry) => ({ ...entry, status: statusOf(entry) }));
    },
  };
}

/**
 * The entity that answers for `failure` of `op`: the one the EntryPoint's code names (AA1x the
 * factory, AA2x the account, AA3x the paymaster), except that a staked factory answers for the
 * account it deploys (EREP-020) and a staked account for its paymaster (EREP-030). AA10 ("sender
 * already constructed") is the sender's own state, not the factory's doing: the sender answers.
 * `staked` names the entities staked when the operation was validated.
 */
export function accountableEntity(op: UserOperation, failure: FailureReason, staked: readonly EntityRole[]): Entity | undefined {
  const entities = entitiesOf(op);
  const named = (role: EntityRole) => entities.find((e) => e.role === role);
  if (failure.code === 10) return named("account");
  if (failure.entity === "account" && staked.includes("factory") && named("factory")) return named("factory");
  if (failure.entity === "paymaster" && staked.includes("account")) return named("account");
  return failure.entity && named(failure.entity);
}

/**
 * UREP-020's allowance of an unstaked factory or paymaster, as ERC-7562 writes it:
 * `SAME_UNSTAKED_ENTITY_MEMPOOL_COUNT + inclusionRate × min(opsIncluded, MAX_OPS_ALLOWED_UNSTAKED_ENTITY)`,
 * with `inclusionRate = opsIncluded / opsSeen` (0 for an entity never seen), rounded down.
 */
export function unstakedAllowance(entry: Pick<ReputationEntry, "opsSeen" | "opsIncluded"> | undefined): number {
  if (!entry || entry.opsSeen === 0) return sameUnstakedEntityMempoolCount;
  const credited = Math.min(entry.opsIncluded, maxOpsAllowedUnstakedEntity);
  return sameUnstakedEntityMempoolCount + Math.floor((entry.opsIncluded * credited) / entry.opsSeen);
}
