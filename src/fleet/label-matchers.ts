import { InvalidInputError } from '../errors.js';

/** A PromQL label matcher: `name="value"`, `name!="value"`, `name=~"regex"` or `name!~"regex"`. */
export interface LabelMatcher {
  readonly name: string;
  readonly op: '=' | '!=' | '=~' | '!~';
  readonly value: string;
}

const NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const OPS = ['=~', '!~', '!=', '='] as const;

/**
 * Parses the label matchers of a series selector, as `--match` takes them:
 * `job="checkout", route=~"/api/.*"`, with or without the surrounding braces. Values are quoted with
 * `"` or `'`; `\\`, `\"`, `\'` and `\n` are escapes. An empty text is no matcher.
 *
 * @throws {InvalidInputError} naming the position and what was expected there.
 * @example parseLabelMatchers('job="checkout"') // [{ name: 'job', op: '=', value: 'checkout' }]
 */
export function parseLabelMatchers(text: string, source = '--match'): LabelMatcher[] {
  let rest = text.trim();
  if (rest.startsWith('{') && rest.endsWith('}')) rest = rest.slice(1, -1).trim();
  const out: LabelMatcher[] = [];
  const fail = (what: string): never => {
    const at = text.length - rest.length;
    throw new InvalidInputError(`expected ${what} at character ${at + 1} of ${JSON.stringify(text)}`, {
      source,
    });
  };
  while (rest !== '') {
    const name = NAME.exec(rest)?.[0];
    if (name === undefined) fail('a label name');
    rest = rest.slice(name!.length).trimStart();
    const op = OPS.find((candidate) => rest.startsWith(candidate));
    if (op === undefined) fail('one of = != =~ !~');
    rest = rest.slice(op!.length).trimStart();
    const quote = rest[0];
    if (quote !== '"' && quote !== "'") fail('a quoted value');
    let value = '';
    let i = 1;
    let closed = false;
    while (i < rest.length) {
      const c = rest[i]!;
      if (c === '\\') {
        const next = rest[i + 1];
        if (next === undefined) break;
        value += next === 'n' ? '\n' : next;
        i += 2;
      } else if (c === quote) {
        closed = true;
        i++;
        break;
      } else {
        value += c;
        i++;
      }
    }
    if (!closed) fail(`a closing ${quote}`);
    rest = rest.slice(i).trimStart();
    out.push({ name: name!, op: op!, value });
    if (rest.startsWith(',')) rest = rest.slice(1).trimStart();
    else if (rest !== '') fail('a comma');
  }
  return out;
}

/** Writes matchers as the inside of a PromQL selector (`a="b",c=~"d"`), values escaped. */
export function formatLabelMatchers(matchers: readonly LabelMatcher[]): string {
  return matchers.map((m) => `${m.name}${m.op}${quoteLabelValue(m.value)}`).join(',');
}

/** A PromQL double-quoted string literal of `value`. */
export function quoteLabelValue(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}
