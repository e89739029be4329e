/**
 * Where the server-side idempotency layer keeps its records: one per key, first claimed by the request
 * that runs, then holding its response until the record expires.
 */

/** A response as stored for replay. */
export interface StoredResponse {
  status: number;
  /** Header names (lower case) and values, hop-by-hop and per-response headers left out. */
  headers: Record<string, string | string[]>;
  /** The body's bytes (a store that serialises records encodes them itself). */
  body: Uint8Array;
}

/** One key's record. */
export type IdempotencyRecord =
  /** The first request with the key is running. `request` is its method and path. */
  | { readonly state: 'running'; readonly owner: string; readonly request: string }
  /**
   * The first request finished. `fingerprint` is its method, path and body digest; `response` is
   * null when the response was over the size bound (a repeat is refused rather than given part of it).
   */
  | {
      readonly state: 'done';
      readonly owner: string;
      readonly request: string;
      readonly fingerprint: string;
      readonly response: StoredResponse | null;
    };

/** A value now, or a promise of it. */
export type Awaitable<T> = T | Promise<T>;

/**
 * A store of idempotency records. A method answers at once (the in-memory store) or with a promise
 * (a remote store); it may throw or reject (the store is unreachable): the layer then applies its
 * `onStoreError` mode. Keys arrive already scoped by the layer.
 */
export interface IdempotencyStore {
  /**
   * Atomically claims `key` for `owner` with a `running` record that expires after `ttlMs`, if no
   * record exists; otherwise leaves it alone. Answers null when the claim was made, or the record
   * that was already there.
   */
  claim(key: string, owner: string, request: string, ttlMs: number): Awaitable<IdempotencyRecord | null>;
  /**
   * Replaces `owner`'s `running` record with the `done` one, keeping `ttlMs` of life from now; does
   * nothing when the record is no longer `owner`'s (expired, or claimed again): the response is
   * stored once. Resolves whether it was stored.
   */
  complete(
    key: string,
    owner: string,
    fingerprint: string,
    response: StoredResponse | null,
    ttlMs: number,
  ): Awaitable<boolean>;
  /** Deletes `owner`'s record (the request may be sent again); nothing when it is not `owner`'s. */
  release(key: string, owner: string): Awaitable<void>;
  /** The record of `key` now, or null. */
  get(key: string): Awaitable<IdempotencyRecord | null>;
}
