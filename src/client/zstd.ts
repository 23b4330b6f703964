// zstd frames both ways. The server's streaming encoder writes frames without a content-size
// field; zstd-napi's one-shot decompress handles those, so no stream plumbing is needed here.
import { compress, decompress } from 'zstd-napi';

/** The 4 magic bytes every zstd frame starts with (RFC 8878 §3.1.1). */
export const ZSTD_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);

export function hasZstdMagic(buf: Buffer): boolean {
  return buf.length >= 4 && buf[0] === 0x28 && buf[1] === 0xb5 && buf[2] === 0x2f && buf[3] === 0xfd;
}

export function zstdCompress(buf: Buffer): Buffer {
  return compress(buf);
}

export function zstdDecompress(buf: Buffer): Buffer {
  return decompress(buf);
}

/** True when a header value (possibly a list like `zstd, gzip`) names zstd. */
export function namesZstd(value: string | string[] | undefined): boolean {
  if (value === undefined) return false;
  const text = Array.isArray(value) ? value.join(',') : value;
  return /(^|[\s,])zstd($|[\s,;])/i.test(text);
}
