import { InvalidOptionError } from '../../errors.js';
import type { IdempotencyRecord, IdempotencyStore, StoredResponse } from './idempotency-store.js';

// A record is one JSON string; a stored response's body goes in it as base64.

/**
 * What the Redis store needs of a client: `eval` in ioredis's form — the script, the number of keys,
 * then the keys and the arguments — resolving to the script's result. An ioredis `Redis` (or
 * `Cluster`) instance is one as it is; for node-redis, wrap its `eval`:
 *
 * ```ts
 * const client = { eval: (script, numKeys, ...args) =>
 *   redis.eval(script, { keys: args.slice(0, numKeys).map(String), arguments: args.slice(numKeys).map(String) }) };
 * ```
 */
export interface RedisEvalClient {
  eval(script: string, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
}

/** Options of {@link createRedisIdempotencyStore}. */
export interface RedisIdempotencyStoreOptions {
  /** A Redis client (see {@link RedisEvalClient}); prazo neither opens nor closes it. */
  client: RedisEvalClient;
  /** Prefix of every key the store writes. @default 'prazo:idem:' */
  prefix?: string;
}

// Each script is one atomic step on the server: the claim is a SET NX PX (the record is created
// only if absent, with its expiry, in one command) that also returns what was there; completing
// and releasing check the owner first, so a response is stored once and only by the request that ran.
const CLAIM = `if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return false end
return redis.call('GET', KEYS[1])`;
const COMPLETE = `local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local r = cjson.decode(v)
if r.owner ~= ARGV[1] or r.state ~= 'running' then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`;
const RELEASE = `local v = redis.call('GET', KEYS[1])
if not v then return 0 end
if cjson.decode(v).owner ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])`;
const GET = `return redis.call('GET', KEYS[1])`;

/**
 * Creates a store in Redis, shared by a fleet of replicas: a record is one JSON string under
 * `prefix + key`, claimed atomically (`SET NX PX`) and expiring with it (`PX`), completed once by
 * its owner. Any Redis 5+ server; one round trip per operation.
 *
 * When Redis cannot be reached the client's promise rejects (or never settles: the layer bounds
 * each operation with its `storeTimeoutMs`) and the layer applies its `onStoreError` mode.
 *
 * @throws {InvalidOptionError} without a usable client.
 * @example
 * import Redis from 'ioredis';
 * const store = createRedisIdempotencyStore({ client: new Redis(process.env.REDIS_URL) });
 */
export function createRedisIdempotencyStore(options: RedisIdempotencyStoreOptions): IdempotencyStore {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('options', 'an object with a client', options);
  const { client } = options;
  if (typeof client !== 'object' || client === null || typeof client.eval !== 'function')
    throw new InvalidOptionError(
      'client',
      'a Redis client with eval(script, numKeys, ...args) (ioredis)',
      client,
    );
  const prefix = options.prefix ?? 'prazo:idem:';
  if (typeof prefix !== 'string') throw new InvalidOptionError('prefix', 'a string', prefix);

  return {
    async claim(key, owner, request, ttlMs) {
      const record: IdempotencyRecord = { state: 'running', owner, request };
      const found = await client.eval(CLAIM, 1, prefix + key, JSON.stringify(record), ttl(ttlMs));
      return found === null || found === undefined ? null : decode(found);
    },
    async complete(key, owner, fingerprint, response: StoredResponse | null, ttlMs) {
      const stored =
        response === null ? null : { ...response, body: Buffer.from(response.body).toString('base64') };
      const record = { state: 'done', owner, request: '', fingerprint, response: stored };
      const done = await client.eval(COMPLETE, 1, prefix + key, owner, JSON.stringify(record), ttl(ttlMs));
      return Number(done) === 1;
    },
    async release(key, owner) {
      await client.eval(RELEASE, 1, prefix + key, owner);
    },
    async get(key) {
      const found = await client.eval(GET, 1, prefix + key);
      return found === null || found === undefined ? null : decode(found);
    },
  };
}

function ttl(ms: number): number {
  return Math.max(1, Math.ceil(ms));
}

/** A stored record; anything unreadable counts as a running record of nobody (never replayed). */
function decode(value: unknown): IdempotencyRecord {
  try {
    const record = JSON.parse(String(value)) as IdempotencyRecord;
    if (record.state === 'running') return record;
    if (record.state === 'done') {
      const response = record.response as unknown as { body: string } | null;
      if (response === null) return record;
      return { ...record, response: { ...record.response!, body: Buffer.from(response.body, 'base64') } };
    }
  } catch {
    // fall through
  }
  return { state: 'running', owner: '', request: '' };
}
