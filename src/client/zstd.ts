// zstd frames both ways. Replies are decoded with the server's bounded streaming decoder:
// zstd-napi's one-shot decompress has no output limit (a few KiB can inflate to gigabytes) and
// returns the bytes decoded so far for a truncated frame without a content-size field, which is
// how the server writes its frames.
import { compress } from 'zstd-napi';
import { zstdDecompressBounded } from '../http/zstd.js';
import { CLIENT_ERROR_CODES, ScanClientError } from './errors.js';

/**
 * Largest decompressed reply: a result plus a rewritten message (at most the server's
 * `max_message`, 50 MiB by default) fits many times over; a decompression bomb does not.
 */
export const MAX_DECOMPRESSED_REPLY_BYTES = 256 * 1024 * 1024;

/** The 4 magic bytes every zstd frame starts with (RFC 8878 §3.1.1). */
export const ZSTD_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);

export function hasZstdMagic(buf: Buffer): boolean {
  return buf.length >= 4 && buf[0] === 0x28 && buf[1] === 0xb5 && buf[2] === 0x2f && buf[3] === 0xfd;
}

export function zstdCompress(buf: Buffer): Buffer {
  return compress(buf);
}

/** Decodes one or more frames; a bad or truncated frame, or output past `limit`, is a BAD_REPLY error. */
export function zstdDecompress(buf: Buffer, limit = MAX_DECOMPRESSED_REPLY_BYTES): Buffer {
  try {
    return zstdDecompressBounded(buf, limit, undefined, '');
  } catch (err) {
    const why = (err as { code?: unknown }).code === 'ERR_BODY_TOO_LARGE' ? `decompresses to more than ${limit} bytes` : (err as Error).message;
    throw new ScanClientError(CLIENT_ERROR_CODES.BAD_REPLY, `bad zstd data: ${why}`, { cause: err });
  }
}

/** True when a header value (possibly a list like `zstd, gzip`) names zstd. */
export function namesZstd(value: string | string[] | undefined): boolean {
  if (value === undefined) return false;
  const text = Array.isArray(value) ? value.join(',') : value;
  return /(^|[\s,])zstd($|[\s,;])/i.test(text);
}
