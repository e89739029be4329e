/** The server-side idempotency layer, re-exported by every server adapter. */
export {
  createIdempotency,
  IDEMPOTENCY_DEFAULTS,
  type Idempotency,
  type IdempotencyOptions,
  type IdempotencyReply,
  type IdempotencyStats,
  REPLAYED_HEADER,
} from './idempotency.js';
export type { Awaitable, IdempotencyRecord, IdempotencyStore, StoredResponse } from './idempotency-store.js';
export {
  createMemoryIdempotencyStore,
  MEMORY_IDEMPOTENCY_STORE_DEFAULTS,
  type MemoryIdempotencyStore,
  type MemoryIdempotencyStoreOptions,
} from './memory-store.js';
export {
  createRedisIdempotencyStore,
  type RedisEvalClient,
  type RedisIdempotencyStoreOptions,
} from './redis-store.js';
