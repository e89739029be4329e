/**
 * The deadline header: how a caller tells a service the absolute instant its answer stops being
 * useful. Wire format: `x-deadline-epoch-ms: <integer epoch milliseconds>`. Parsed, with the local
 * cap, by `deadline/header-codec.ts`.
 */

/** Name of the header that carries the caller's absolute limit, in epoch milliseconds (lower case). */
export const DEADLINE_HEADER = 'x-deadline-epoch-ms';
