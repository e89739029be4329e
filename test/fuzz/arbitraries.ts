/**
 * Arbitraries shared by the fuzz suite: the hostile shapes external input takes (header values as
 * proxies forward them, CLI arguments as shells split them, files as editors save them).
 */
import fc from 'fast-check';

/** Runs per property: the issue asks for at least 10 000 per external input. */
export const RUNS = 10_000;

/** Strings that look like numbers to a careless parser. */
export const numberish: fc.Arbitrary<string> = fc.oneof(
  fc.integer().map(String),
  fc.double().map(String),
  fc.bigInt().map(String),
  fc.constantFrom(
    '',
    ' ',
    '0',
    '-0',
    '+1',
    '1e3',
    '1E400',
    '0x10',
    '0b1',
    '0o7',
    '1_000',
    '١٢٣',
    'NaN',
    'Infinity',
    '-Infinity',
    '9007199254740993',
    '99999999999999999999999',
    '1.',
    '.5',
    '  42  ',
    '42abc',
    '\t7\n',
    '1,2',
    'null',
    'undefined',
    '__proto__',
    'constructor',
  ),
);

/** Any header value a peer may send: printable text, control characters, unicode, numbers. */
export const headerValue: fc.Arbitrary<string> = fc.oneof(
  numberish,
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: fc.constantFrom(...'0123456789 .,-+eE:;SmHMunTZGA'), maxLength: 30 }),
);

/** A value as Node's `IncomingHttpHeaders` presents it: missing, a string, or repeated. */
export const headerSlot: fc.Arbitrary<string | string[] | undefined> = fc.oneof(
  fc.constant(undefined),
  headerValue,
  fc.array(headerValue, { maxLength: 3 }),
);

/** Captured CLI output, for `runCli(argv, io)`. */
export function captureIo() {
  let stdout = '';
  let stderr = '';
  return {
    io: {
      stdout: {
        write: (chunk: string | Uint8Array) => {
          stdout += String(chunk);
          return true;
        },
      },
      stderr: {
        write: (chunk: string | Uint8Array) => {
          stderr += String(chunk);
          return true;
        },
      },
    },
    stdout: () => stdout,
    stderr: () => stderr,
  };
}
