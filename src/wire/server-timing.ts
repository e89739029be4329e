/**
 * The `Server-Timing` header (W3C Server Timing): a generic, bounded parser and prazo's own metrics
 * in it, by which a prazo server tells its caller where the caller's deadline went inside it.
 *
 * prazo writes, for the hop that answers (no `desc`) and for every hop below it (`desc` = the path
 * of dependency names from the answering hop, joined with `>`):
 *
 * | metric          | `dur`                                                        |
 * |-----------------|--------------------------------------------------------------|
 * | `prazo-left`    | time left of the deadline when the request arrived           |
 * | `prazo-queue`   | time the request waited for admission before its handler ran |
 * | `prazo-handler` | time in the handler until the response headers were written  |
 * | `prazo-wait`    | time the handler of the hop *above* `desc` waited on `desc`  |
 *
 * e.g. `prazo-left;dur=1890, prazo-queue;dur=0, prazo-handler;dur=1850, prazo-wait;desc=supplier;dur=1700,
 * prazo-handler;desc=supplier;dur=1690`. Browsers' developer tools and `PerformanceServerTiming`
 * show the same metrics; other metrics in the header are kept by the parser and ignored by prazo.
 *
 * @see https://www.w3.org/TR/server-timing/
 */

/** Name of the header, lower case (as Node and undici hand headers over). */
export const SERVER_TIMING_HEADER = 'server-timing';

/** Longest header value read, in characters: a longer one is ignored whole (`too-long`). */
export const MAX_SERVER_TIMING_LENGTH = 4096;
/** Most metrics read from one header; the rest are ignored (`too-many`). */
export const MAX_SERVER_TIMING_METRICS = 64;
/** Most hops below the answering one that prazo reads or writes (`too-deep`). */
export const MAX_HOP_DEPTH = 6;
/** Most dependencies per hop that prazo reads or writes (`too-many`). */
export const MAX_HOP_DEPENDENCIES = 8;
/** Longest dependency name kept, in characters (longer ones are cut). */
export const MAX_NAME_LENGTH = 64;

/** One metric of a `Server-Timing` header. */
export interface ServerTimingMetric {
  readonly name: string;
  /** `dur`, in ms, when present and a finite number. */
  readonly durMs: number | undefined;
  /** `desc`, when present. */
  readonly desc: string | undefined;
}

/** Why (part of) a `Server-Timing` header was ignored. */
export type ServerTimingProblem =
  /** Not text, or a metric that does not follow the grammar (that metric is skipped). */
  | 'malformed'
  /** Longer than {@link MAX_SERVER_TIMING_LENGTH}: ignored whole. */
  | 'too-long'
  /** More metrics, dependencies or hops than read (the first ones are kept). */
  | 'too-many'
  | 'too-deep'
  /** A prazo metric whose `dur` is missing, negative (but for `prazo-left`) or not a number. */
  | 'bad-value';

/** What {@link parseServerTiming} made of a header value. */
export interface ParsedServerTiming {
  readonly metrics: ServerTimingMetric[];
  /** The first reason something was ignored, or null when everything was read. */
  problem: ServerTimingProblem | null;
}

/**
 * Parses a `Server-Timing` value (or the values of repeated headers). Never throws; memory is
 * bounded by {@link MAX_SERVER_TIMING_LENGTH} and {@link MAX_SERVER_TIMING_METRICS}. A metric that
 * breaks the grammar is skipped up to the next comma; the others are kept (as browsers do).
 */
export function parseServerTiming(value: unknown): ParsedServerTiming {
  const result: ParsedServerTiming = { metrics: [], problem: null };
  let text: string;
  if (typeof value === 'string') text = value;
  else if (Array.isArray(value)) {
    let length = 0;
    for (const part of value) {
      if (typeof part !== 'string') {
        result.problem = 'malformed';
        return result;
      }
      length += part.length + 1;
    }
    if (length > MAX_SERVER_TIMING_LENGTH + 1) {
      result.problem = 'too-long';
      return result;
    }
    text = value.join(',');
  } else {
    if (value !== undefined) result.problem = 'malformed';
    return result;
  }
  if (text.length > MAX_SERVER_TIMING_LENGTH) {
    result.problem = 'too-long';
    return result;
  }
  const reader = new Reader(text);
  while (!reader.done()) {
    reader.skipSpace();
    if (reader.peek() === COMMA) {
      reader.pos++;
      continue;
    }
    if (reader.done()) break;
    const metric = reader.metric();
    if (metric === null) {
      result.problem ??= 'malformed';
      reader.skipPastComma();
      continue;
    }
    if (result.metrics.length === MAX_SERVER_TIMING_METRICS) {
      result.problem ??= 'too-many';
      break;
    }
    result.metrics.push(metric);
  }
  return result;
}

const COMMA = 44;
const SEMICOLON = 59;
const EQUALS = 61;
const QUOTE = 34;
const BACKSLASH = 92;

/** RFC 9110 `tchar`. */
function isTokenChar(c: number): boolean {
  if (c >= 97 && c <= 122) return true; // a-z
  if (c >= 65 && c <= 90) return true; // A-Z
  if (c >= 48 && c <= 57) return true; // 0-9
  // ! # $ % & ' * + - . ^ _ ` | ~
  return (
    c === 33 ||
    (c >= 35 && c <= 39) ||
    c === 42 ||
    c === 43 ||
    c === 45 ||
    c === 46 ||
    c === 94 ||
    c === 95 ||
    c === 96 ||
    c === 124 ||
    c === 126
  );
}

class Reader {
  pos = 0;
  readonly #text: string;

  constructor(text: string) {
    this.#text = text;
  }

  done(): boolean {
    return this.pos >= this.#text.length;
  }

  peek(): number {
    return this.#text.charCodeAt(this.pos);
  }

  skipSpace(): void {
    const text = this.#text;
    while (this.pos < text.length) {
      const c = text.charCodeAt(this.pos);
      if (c !== 32 && c !== 9) break;
      this.pos++;
    }
  }

  skipPastComma(): void {
    const text = this.#text;
    let quoted = false;
    while (this.pos < text.length) {
      const c = text.charCodeAt(this.pos++);
      if (quoted) {
        if (c === BACKSLASH) this.pos++;
        else if (c === QUOTE) quoted = false;
      } else if (c === QUOTE) quoted = true;
      else if (c === COMMA) return;
    }
  }

  token(): string | null {
    const text = this.#text;
    const start = this.pos;
    while (this.pos < text.length && isTokenChar(text.charCodeAt(this.pos))) this.pos++;
    return this.pos === start ? null : text.slice(start, this.pos);
  }

  quoted(): string | null {
    const text = this.#text;
    this.pos++; // the opening quote
    let out = '';
    let from = this.pos;
    while (this.pos < text.length) {
      const c = text.charCodeAt(this.pos);
      if (c === QUOTE) {
        out += text.slice(from, this.pos);
        this.pos++;
        return out;
      }
      if (c === BACKSLASH) {
        out += text.slice(from, this.pos);
        this.pos++;
        if (this.pos >= text.length) return null;
        from = this.pos;
      } else if ((c < 32 && c !== 9) || c === 127) return null;
      this.pos++;
    }
    return null; // unterminated
  }

  /** One metric, up to (not including) the comma that ends it; null when it breaks the grammar. */
  metric(): ServerTimingMetric | null {
    const name = this.token();
    if (name === null) return null;
    let durMs: number | undefined;
    let desc: string | undefined;
    let seenDur = false;
    let seenDesc = false;
    for (;;) {
      this.skipSpace();
      if (this.done() || this.peek() === COMMA) return { name, durMs, desc };
      if (this.peek() !== SEMICOLON) return null;
      this.pos++;
      this.skipSpace();
      const param = this.token();
      if (param === null) return null;
      this.skipSpace();
      let value = '';
      if (this.peek() === EQUALS) {
        this.pos++;
        this.skipSpace();
        const v = this.peek() === QUOTE ? this.quoted() : this.token();
        if (v === null) return null;
        value = v;
      }
      // The first occurrence of a parameter counts (W3C Server Timing, processing model).
      const lower = param.toLowerCase();
      if (lower === 'dur' && !seenDur) {
        seenDur = true;
        const n = value === '' ? Number.NaN : Number(value);
        durMs = Number.isFinite(n) ? n : undefined;
      } else if (lower === 'desc' && !seenDesc) {
        seenDesc = true;
        desc = value;
      }
    }
  }
}

// --- prazo's metrics ------------------------------------------------------------------------------

/** Where a deadline went inside one hop, as it answered (a tree: its dependencies below it). */
export interface HopTiming {
  /** Time left of the deadline when the request arrived there, in ms. */
  leftMs: number | undefined;
  /** Time it waited for admission, in ms. */
  queuedMs: number | undefined;
  /** Time in its handler until it answered, in ms. */
  handlerMs: number | undefined;
  /** The dependencies its handler waited on, in the order they appear. */
  readonly dependencies: DependencyWait[];
}

/** The time a hop's handler waited on one of its dependencies, and that dependency's own timing. */
export interface DependencyWait {
  /** The name the hop calls the dependency by (`dependency({ name })`). */
  readonly name: string;
  /** Wall time with at least one call to it in flight, in ms. */
  waitedMs: number;
  /** What the dependency said of itself (its own `Server-Timing`), or null (not a prazo server). */
  hop: HopTiming | null;
}

/** What {@link readHopTiming} made of a header: the hop, or null when it carried no prazo metric. */
export interface HopReading {
  readonly hop: HopTiming | null;
  readonly problem: ServerTimingProblem | null;
}

const PATH_SEPARATOR = '>';

/**
 * prazo's metrics in a `Server-Timing` value, as a tree (see the module comment). Never throws;
 * bounded: at most {@link MAX_HOP_DEPTH} levels and {@link MAX_HOP_DEPENDENCIES} dependencies a
 * hop. Metrics of other tools are ignored; a prazo metric with a bad `dur` is ignored with
 * `bad-value`.
 */
export function readHopTiming(value: unknown): HopReading {
  const parsed = parseServerTiming(value);
  let problem = parsed.problem;
  let root: HopTiming | null = null;
  for (const metric of parsed.metrics) {
    const name = metric.name;
    if (name.length < 10 || !name.startsWith('prazo-')) continue;
    const kind = name.slice(6).toLowerCase();
    if (kind !== 'left' && kind !== 'queue' && kind !== 'handler' && kind !== 'wait') continue;
    const dur = metric.durMs;
    if (dur === undefined || (dur < 0 && kind !== 'left') || Math.abs(dur) > 1e9) {
      problem ??= 'bad-value';
      continue;
    }
    const path = metric.desc === undefined || metric.desc === '' ? [] : metric.desc.split(PATH_SEPARATOR);
    if (kind === 'wait' && path.length === 0) {
      problem ??= 'malformed';
      continue;
    }
    if (path.length > MAX_HOP_DEPTH) {
      problem ??= 'too-deep';
      continue;
    }
    root ??= emptyHop();
    if (kind === 'wait') {
      const parent = hopAt(root, path, path.length - 1);
      const wait = parent === null ? null : waitOn(parent, path[path.length - 1]!);
      if (wait === null) {
        problem ??= 'too-many';
        continue;
      }
      wait.waitedMs = dur;
      continue;
    }
    const hop = hopAt(root, path, path.length);
    if (hop === null) {
      problem ??= 'too-many';
      continue;
    }
    if (kind === 'left') hop.leftMs = dur;
    else if (kind === 'queue') hop.queuedMs = dur;
    else hop.handlerMs = dur;
  }
  return { hop: root, problem };
}

function emptyHop(): HopTiming {
  return { leftMs: undefined, queuedMs: undefined, handlerMs: undefined, dependencies: [] };
}

/** The wait of `hop` on `name`, made when new; null past {@link MAX_HOP_DEPENDENCIES}. */
function waitOn(hop: HopTiming, rawName: string): DependencyWait | null {
  const name = rawName.length > MAX_NAME_LENGTH ? rawName.slice(0, MAX_NAME_LENGTH) : rawName;
  for (const wait of hop.dependencies) if (wait.name === name) return wait;
  if (hop.dependencies.length === MAX_HOP_DEPENDENCIES) return null;
  const wait: DependencyWait = { name, waitedMs: 0, hop: null };
  hop.dependencies.push(wait);
  return wait;
}

/** The hop at the first `depth` names of `path` below `root`, made on the way; null when full. */
function hopAt(root: HopTiming, path: readonly string[], depth: number): HopTiming | null {
  let hop = root;
  for (let i = 0; i < depth; i++) {
    const wait = waitOn(hop, path[i]!);
    if (wait === null) return null;
    wait.hop ??= emptyHop();
    hop = wait.hop;
  }
  return hop;
}

/**
 * The `Server-Timing` value of a hop: its own metrics, then those of every hop below it, depth
 * first, each dependency's wait before its own metrics; at most {@link MAX_HOP_DEPTH} levels and
 * {@link MAX_HOP_DEPENDENCIES} dependencies a hop, durations rounded to 0.1 ms.
 */
export function formatHopTiming(hop: HopTiming): string {
  const parts: string[] = [];
  writeHop(parts, { length: 0 }, hop, '');
  return parts.join(', ');
}

/**
 * Writes `hop`'s metrics into `parts`, never beyond what {@link parseServerTiming} reads whole (at
 * most {@link MAX_SERVER_TIMING_METRICS} metrics in {@link MAX_SERVER_TIMING_LENGTH} characters):
 * the metrics that would not fit — the deepest and last of a large tree — are left out, so a prazo
 * server's header is never one its prazo caller ignores.
 */
function writeHop(parts: string[], size: { length: number }, hop: HopTiming, path: string): void {
  const push = (metric: string): boolean => {
    const length = size.length + (parts.length === 0 ? 0 : 2) + metric.length;
    if (parts.length >= MAX_SERVER_TIMING_METRICS || length > MAX_SERVER_TIMING_LENGTH) return false;
    parts.push(metric);
    size.length = length;
    return true;
  };
  const desc = path === '' ? '' : `;desc=${quote(path)}`;
  if (hop.leftMs !== undefined && !push(`prazo-left${desc};dur=${ms(hop.leftMs)}`)) return;
  if (hop.queuedMs !== undefined && !push(`prazo-queue${desc};dur=${ms(hop.queuedMs)}`)) return;
  if (hop.handlerMs !== undefined && !push(`prazo-handler${desc};dur=${ms(hop.handlerMs)}`)) return;
  const depth = path === '' ? 0 : path.split(PATH_SEPARATOR).length;
  if (depth >= MAX_HOP_DEPTH) return;
  const deps = hop.dependencies;
  for (let i = 0; i < deps.length && i < MAX_HOP_DEPENDENCIES; i++) {
    const wait = deps[i]!;
    const below = path === '' ? safeName(wait.name) : path + PATH_SEPARATOR + safeName(wait.name);
    if (!push(`prazo-wait;desc=${quote(below)};dur=${ms(wait.waitedMs)}`)) return;
    if (wait.hop !== null) writeHop(parts, size, wait.hop, below);
  }
}

/** A dependency name as a path segment: printable ASCII, no `>`, at most {@link MAX_NAME_LENGTH}. */
function safeName(name: string): string {
  const cut = name.length > MAX_NAME_LENGTH ? name.slice(0, MAX_NAME_LENGTH) : name;
  return cut.replace(/[^\x20-\x7e]|>/g, '_');
}

/** A `desc` value: a token when it is one, else a quoted-string. */
function quote(text: string): string {
  let token = text.length > 0;
  for (let i = 0; i < text.length && token; i++) token = isTokenChar(text.charCodeAt(i));
  return token ? text : `"${text.replace(/["\\]/g, '\\$&')}"`;
}

function ms(value: number): string {
  return String(Math.round(value * 10) / 10);
}
