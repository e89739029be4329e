/**
 * What a resolver answers: the origins, or the origins with the time until they should be asked
 * for again (`refreshMs`, e.g. a DNS TTL), which then replaces the dependency's `originsRefreshMs`
 * for the next poll.
 */
export type OriginsAnswer =
  | readonly string[]
  | { readonly origins: readonly string[]; readonly refreshMs?: number };

/**
 * The current instances of a dependency, asked again and again: a function returning its origins,
 * at once or as a promise. It may carry a `cancel()` that abandons a resolution in progress
 * (`close()` calls it).
 */
export type OriginResolver = (() => OriginsAnswer | Promise<OriginsAnswer>) & { cancel?: () => void };
