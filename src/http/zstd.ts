// zstd for scan bodies: bounded streaming decompression (a zip bomb stops at the body limit,
// never at the memory limit) and reply compression, both optionally with a dictionary
// chosen by numeric id (Rspamd's zstd_input_dictionary / zstd_output_dictionary).

import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import type * as ZstdBinding from 'zstd-napi/binding.js';
import { MailsiftError } from './errors.js';

// The native binding is CommonJS with a computed require, so ESM named imports cannot see it.
const binding = createRequire(import.meta.url)('zstd-napi/binding.js') as typeof ZstdBinding;

export const ZSTD_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);

export function hasZstdMagic(b: Buffer): boolean {
  return b.length >= 4 && b[0] === 0x28 && b[1] === 0xb5 && b[2] === 0x2f && b[3] === 0xfd;
}

/** Compression level for replies: replies are small JSON, speed matters more than ratio. */
const REPLY_LEVEL = 1;

export interface ZstdDictionary {
  id: number;
  data: Buffer;
}

export interface DictionarySet {
  input?: ZstdDictionary;
  output?: ZstdDictionary;
}

/**
 * A configured dictionary: a file path or bytes (id read from the dictionary header), or an
 * already-loaded `{ id, data }` (config may set the id of a raw-content dictionary).
 */
export type DictionarySource = string | Buffer | { id: number; data: Buffer };

export interface DictionaryFiles {
  input?: DictionarySource | undefined;
  output?: DictionarySource | undefined;
}

function loadOne(src: DictionarySource): ZstdDictionary {
  if (typeof src === 'object' && !Buffer.isBuffer(src)) return { id: src.id, data: src.data };
  const data = typeof src === 'string' ? readFileSync(src) : src;
  // A raw-content dictionary has no header and so id 0: it can only be used with `Dictionary: 0`.
  return { id: binding.getDictIDFromDict(data), data };
}

export function loadDictionaries(files: DictionaryFiles | undefined): DictionarySet {
  const out: DictionarySet = {};
  if (files?.input) out.input = loadOne(files.input);
  if (files?.output) out.output = loadOne(files.output);
  return out;
}

/**
 * Why zstd cannot use `data` as a dictionary, or undefined when it can (both directions).
 * A trained dictionary whose tables are corrupt passes the magic and id checks but fails
 * here; checked at load, so that is a config error naming the file, not a failure of every
 * request that asks for the dictionary.
 */
export function dictionaryProblem(data: Buffer): string | undefined {
  try {
    new binding.DCtx().loadDictionary(data);
    new binding.CCtx().loadDictionary(data);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * Checks the `Dictionary` request header against the configured input dictionary and
 * returns the bytes to decode with (undefined: no dictionary requested).
 */
export function selectInputDictionary(header: string | undefined, dicts: DictionarySet): Buffer | undefined {
  if (header === undefined) return undefined;
  const t = header.trim();
  if (!/^\d+$/.test(t)) throw new MailsiftError('ERR_DICTIONARY_NON_NUMERIC', 'Non numeric dictionary');
  if (!dicts.input) throw new MailsiftError('ERR_DICTIONARY_UNDEFINED', 'Unknown dictionary, undefined locally');
  if (Number(t) !== dicts.input.id) {
    throw new MailsiftError('ERR_DICTIONARY_MISMATCH', 'Unknown dictionary, invalid dictionary id');
  }
  return dicts.input.data;
}

/** Output slice of the measuring pass, reused for every step: that pass keeps no output. */
const MEASURE_STEP = 128 * 1024;

const tooLarge = (): MailsiftError => new MailsiftError('ERR_BODY_TOO_LARGE', 'Request entity too large (decompressed)');

/**
 * Feeds all of `input` to the decoder, writing where `room(total)` says (never an empty
 * buffer), and returns the bytes produced. Each call either consumes input or produces output
 * (a call doing neither while input is left is a stall), so the loop ends within
 * input.length + output calls, and the output is bounded by `limit`.
 */
function drive(dctx: ZstdBinding.DCtx, input: Buffer, limit: number, room: (total: number) => Uint8Array, errorPrefix: string): number {
  let src = input;
  let total = 0;
  let lastRet = 0;
  while (src.length > 0 || lastRet > 0) {
    const [ret, produced, consumed] = dctx.decompressStream(room(total), src);
    lastRet = ret;
    total += produced;
    if (total > limit) throw tooLarge();
    src = src.subarray(consumed);
    if (consumed === 0 && produced === 0) {
      if (src.length === 0) break;
      throw new MailsiftError('ERR_DECOMPRESSION', `${errorPrefix}stream stalled`);
    }
  }
  if (lastRet !== 0) throw new MailsiftError('ERR_DECOMPRESSION', `${errorPrefix}Truncated zstd frame`);
  return total;
}

/**
 * The content size a lone frame declares in its header, or undefined: several frames (only
 * the first one's size could be read), no size field (Rspamd's streaming writer and ours
 * leave it out), or a header zstd cannot read, which the decoding pass then reports in zstd's
 * own words. The decoder checks the size it declares against what the frame holds.
 */
function declaredContentSize(input: Buffer): number | undefined {
  try {
    if (binding.findFrameCompressedSize(input) !== input.length) return undefined;
    return binding.getFrameContentSize(input) ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * Decodes one or more concatenated zstd frames, frames without a content size included, into
 * one buffer of exactly the output's size: peak memory is the output once, never a list of
 * slices plus their concatenation (two copies of up to `limit` in Buffers, which V8's heap
 * limit does not count: a 1.6 KB request of RLE blocks cost 100 MiB in the decoder). The size
 * is the frame's declared content size when it has one, else a first pass counts the output
 * (into one reused slice) and a second decodes it; for highly compressible input that
 * second pass is the cheap part of the request (the scan of the output costs ~8 times more).
 * Stops with ERR_BODY_TOO_LARGE as soon as the output would pass `limit`. There is no cap on
 * the compression ratio, as in Rspamd: legitimate messages can compress thousands of times (a
 * base64 run of zeros), and the output is bounded by `limit` exactly as a plain body is.
 */
export function zstdDecompressBounded(input: Buffer, limit: number, dictionary?: Buffer, errorPrefix = 'Decompression error: '): Buffer {
  const dctx = new binding.DCtx();
  // Outside the try: a dictionary zstd cannot load is the server's problem (the config refuses
  // one, src/config/dictionaries.ts), not a bad request; it stays an uncoded error (500, logged).
  if (dictionary) dctx.loadDictionary(dictionary);
  try {
    const declared = declaredContentSize(input);
    if (declared !== undefined && declared > limit) throw tooLarge();
    let size = declared;
    if (size === undefined) {
      const scratch = Buffer.allocUnsafe(MEASURE_STEP);
      size = drive(dctx, input, limit, () => scratch, errorPrefix);
      dctx.reset(binding.ResetDirective.sessionOnly);
    }
    const out = Buffer.allocUnsafe(size);
    // Past `size` only a frame holding more than its header declares could write (zstd refuses
    // such a frame itself first): one spare byte lets it show, and that is the end.
    const spare = Buffer.allocUnsafe(1);
    const mismatch = (got: number) => new MailsiftError('ERR_DECOMPRESSION', `${errorPrefix}frame content size mismatch (${got} bytes, ${size} declared)`);
    const got = drive(dctx, input, limit, (total) => {
      if (total > size) throw mismatch(total);
      return total < size ? out.subarray(total) : spare;
    }, errorPrefix);
    if (got !== size) throw mismatch(got);
    return out;
  } catch (err) {
    if ((err as { code?: unknown }).code !== undefined && err instanceof MailsiftError) throw err;
    throw new MailsiftError('ERR_DECOMPRESSION', `${errorPrefix}${(err as Error).message}`, { cause: err });
  }
}

/** One frame with no content-size field, like Rspamd's streaming writer. */
export function zstdCompress(input: Buffer, dictionary?: Buffer): Buffer {
  const cctx = new binding.CCtx();
  cctx.setParameter(binding.CParameter.compressionLevel, REPLY_LEVEL);
  cctx.setParameter(binding.CParameter.contentSizeFlag, 0);
  if (dictionary) cctx.loadDictionary(dictionary);
  const bound = binding.compressBound(input.length) + 64;
  const out = Buffer.allocUnsafe(bound);
  const [remaining, produced] = cctx.compressStream2(out, input, binding.EndDirective.end);
  if (remaining !== 0) throw new MailsiftError('ERR_SCAN_FAILED', 'zstd compression did not finish');
  return out.subarray(0, produced);
}
