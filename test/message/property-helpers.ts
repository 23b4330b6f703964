// Shared by the message parsers' property tests: fast-check run settings, a per-call CPU guard,
// and generators of text made of the characters mail parsers branch on.
import fc from 'fast-check';

/** A fixed seed keeps CI runs reproducible; FC_SEED=<n> explores other inputs locally. */
export const SEED = Number(process.env['FC_SEED'] ?? 1_726_117);

/**
 * fast-check's assert with the shared seed and a run count chosen for a few seconds per file.
 * A failure's report is cut short: a counterexample can be 64 Ki characters.
 */
export function check<T>(numRuns: number, property: fc.IProperty<T>): void {
  fc.assert(property, {
    seed: SEED,
    numRuns,
    reporter(details) {
      if (!details.failed) return;
      const cause = details.errorInstance instanceof Error ? `\n${details.errorInstance.message.slice(0, 1000)}` : '';
      const text = (fc.defaultReportMessage(details) ?? 'property failed') + cause;
      throw new Error(text.length > 3000 ? `${text.slice(0, 1500)}\n…\n${text.slice(-1500)}` : text);
    },
  });
}

/**
 * `fn()`, failing when it used more than `maxMs` of CPU. The inputs here are at most tens of
 * kilobytes: a parser that takes this long on them is quadratic (or worse) somewhere.
 */
export function cheap<T>(what: string, maxMs: number, fn: () => T): T {
  const before = process.cpuUsage();
  const value = fn();
  const used = process.cpuUsage(before);
  const ms = (used.user + used.system) / 1000;
  if (ms > maxMs) throw new Error(`${what} took ${ms.toFixed(0)} ms of CPU (limit ${maxMs})`);
  return value;
}

/** CPU one parser call may take on the inputs below, generous for a loaded 2-core machine. */
export const CALL_CPU_MS = 400;

/** Every blank `\s` matches (the Received tokeniser once looped forever on the non-ASCII ones). */
export const BLANKS = ['\t', '\n', '\u000b', '\u000c', '\r', ' ', '\u00a0', '\u1680', '\u2000', '\u2005', '\u200a', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\ufeff'];

/** Characters mail parsers branch on, plus letters, digits and a few non-ASCII letters. */
export const MAIL_CHARS = [
  ...BLANKS, '(', ')', '[', ']', '<', '>', '{', '}', '"', "'", '\\', '/', ':', ';', ',', '.', '@', '=', '?', '*', '%', '&', '#', '!', '-', '_', '+', '~',
  'a', 'b', 'e', 'f', 'q', 'Q', 'B', 'x', 'z', 'A', 'Z', '0', '1', '2', '9', 'é', 'ж', '中', '\u0000', '\ufffd',
];

export const mailChar = fc.constantFrom(...MAIL_CHARS);

/** Text of MAIL_CHARS and tokens that matter (`from`, `by`, `=?`, `--`, `http://`, …), up to `maxLength` pieces. */
export function mailText(maxLength = 200, tokens: readonly string[] = []): fc.Arbitrary<string> {
  const unit = tokens.length ? fc.oneof({ weight: 4, arbitrary: mailChar }, { weight: 1, arbitrary: fc.constantFrom(...tokens) }) : mailChar;
  return fc.array(unit, { maxLength }).map((a) => a.join(''));
}

/** The longest repeated input: a header value's cap (MAX_HEADER_LINE_BYTES). */
const MAX_REPEATED_CHARS = 64 * 1024;

/**
 * A short fragment repeated up to `maxTimes` (at most 64 Ki characters in all): the shape of
 * input that exposes quadratic loops.
 */
export function repeated(fragment: fc.Arbitrary<string>, maxTimes = 4000): fc.Arbitrary<string> {
  return fc.tuple(fragment, fc.integer({ min: 1, max: maxTimes }), fragment).map(([f, n, tail]) => (f.repeat(n) + tail).slice(0, MAX_REPEATED_CHARS));
}

/** Text for a parser: mail-character soup, a repeated fragment, or arbitrary UTF-16 code units. */
export function parserInput(tokens: readonly string[] = [], maxLength = 200): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: mailText(maxLength, tokens) },
    { weight: 2, arbitrary: repeated(mailText(12, tokens)) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength }) },
  );
}

/** Bytes for a parser: random bytes, or parserInput as UTF-8 or latin1. */
export function parserBytes(tokens: readonly string[] = [], maxLength = 400): fc.Arbitrary<Buffer> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.uint8Array({ maxLength }).map((a) => Buffer.from(a)) },
    { weight: 2, arbitrary: parserInput(tokens, maxLength).map((s) => Buffer.from(s, 'utf8')) },
    { weight: 1, arbitrary: parserInput(tokens, maxLength).map((s) => Buffer.from(s, 'latin1')) },
  );
}
