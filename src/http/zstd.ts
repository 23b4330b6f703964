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

/** Output slice used by the streaming decoder; also the growth step of the result. */
const DECODE_STEP = 128 * 1024;
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

/**
 * Decodes one or more concatenated zstd frames, frames without a content size included.
 * Stops with ERR_BODY_TOO_LARGE as soon as the output would pass `limit`.
 */
export function zstdDecompressBounded(input: Buffer, limit: number, dictionary?: Buffer, errorPrefix = 'Decompression error: '): Buffer {
  const dctx = new binding.DCtx();
  if (dictionary) dctx.loadDictionary(dictionary);
  const parts: Buffer[] = [];
  let total = 0;
  let src = input;
  let out = Buffer.allocUnsafe(DECODE_STEP);
  let lastRet = 0;
  try {
    while (src.length > 0 || lastRet > 0) {
      const [ret, produced, consumed] = dctx.decompressStream(out, src);
      lastRet = ret;
      if (produced > 0) {
        total += produced;
        if (total > limit) throw new MailsiftError('ERR_BODY_TOO_LARGE', 'Request entity too large (decompressed)');
        parts.push(out.subarray(0, produced));
        out = Buffer.allocUnsafe(DECODE_STEP);
      }
      src = src.subarray(consumed);
      if (consumed === 0 && produced === 0) {
        if (src.length === 0) break;
        throw new MailsiftError('ERR_DECOMPRESSION', `${errorPrefix}stream stalled`);
      }
    }
  } catch (err) {
    if ((err as { code?: unknown }).code !== undefined && err instanceof MailsiftError) throw err;
    throw new MailsiftError('ERR_DECOMPRESSION', `${errorPrefix}${(err as Error).message}`, { cause: err });
  }
  if (lastRet !== 0) throw new MailsiftError('ERR_DECOMPRESSION', `${errorPrefix}Truncated zstd frame`);
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts, total);
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
