/**
 * The criticality header: how a caller tells a service how much its request matters when the service
 * must shed load. Wire format: `x-criticality: critical | default | sheddable` (case-insensitive,
 * surrounding whitespace ignored). Anything else, or no header, reads as `default`.
 */

/** Name of the header that carries a request's criticality (lower case). */
export const CRITICALITY_HEADER = 'x-criticality';

/**
 * The criticality levels, most important first. `critical` is shed last (it may take the queue place
 * of waiting lower-criticality work), `sheddable` first (refused while the queue is half full or
 * under sustained delay).
 */
export const CRITICALITY_LEVELS = Object.freeze(['critical', 'default', 'sheddable'] as const);

/** A request's criticality: `critical`, `default` or `sheddable`. */
export type Criticality = (typeof CRITICALITY_LEVELS)[number];

/**
 * Reads a criticality header value. Never throws: a missing, empty, unknown or repeated-and-unknown
 * value is `default` (the same as a request that says nothing). For a repeated header the first value
 * counts.
 * @example parseCriticality(' Sheddable ') // 'sheddable'
 */
export function parseCriticality(value: unknown): Criticality {
  const first = Array.isArray(value) ? (value as unknown[])[0] : value;
  if (typeof first !== 'string') return 'default';
  switch (first.trim().toLowerCase()) {
    case 'critical':
      return 'critical';
    case 'sheddable':
      return 'sheddable';
    default:
      return 'default';
  }
}
