import type {
  BlockSource,
  ChainClient,
  Clock,
  Logger,
  MempoolPolicy,
  MempoolStore,
  RelayerSigner,
  ReputationStore,
  Submitter,
} from "@bundlekit/core";
import { Context } from "effect";

/** The engine's ports as Effect services: one key each, provided by the layers of this package or your own. */

// Annotated, so that the declaration names `ChainClient` instead of spelling out viem's internal types.
const ChainClientKey: Context.ServiceClass<ChainClientService, "@bundlekit/ChainClient", ChainClient> =
  Context.Service<ChainClientService, ChainClient>()("@bundlekit/ChainClient");

/** Read access to the chain (a viem `PublicClient`). */
export class ChainClientService extends ChainClientKey {}

/** The mempool's durable state. */
export class MempoolStoreService extends Context.Service<MempoolStoreService, MempoolStore>()("@bundlekit/MempoolStore") {}

/** ERC-7562 reputation counters. */
export class ReputationStoreService extends Context.Service<ReputationStoreService, ReputationStore>()("@bundlekit/ReputationStore") {}

/** The relayer accounts that pay for bundles. */
export class RelayerSignerService extends Context.Service<RelayerSignerService, RelayerSigner>()("@bundlekit/RelayerSigner") {}

/** How bundles reach the chain. Optional: without it the engine uses the submitter `relayingMode` names. */
export class SubmitterService extends Context.Service<SubmitterService, Submitter>()("@bundlekit/Submitter") {}

/** Who enters the pool and what goes into a bundle. Optional: the default ERC-7562 policy otherwise. */
export class MempoolPolicyService extends Context.Service<MempoolPolicyService, MempoolPolicy>()("@bundlekit/MempoolPolicy") {}

/** New blocks. Optional: polling the chain client otherwise. */
export class BlockSourceService extends Context.Service<BlockSourceService, BlockSource>()("@bundlekit/BlockSource") {}

/** The engine's logger (see `effectLogger`: the engine's lines go through Effect's `Logger`). */
export class EngineLoggerService extends Context.Service<EngineLoggerService, Logger>()("@bundlekit/Logger") {}

/** The engine's clock (see `effectClock`: Effect's `Clock`, so `TestClock` drives the engine's timers). */
export class EngineClockService extends Context.Service<EngineClockService, Clock>()("@bundlekit/Clock") {}
