// A /checkv2 (or legacy v1) HTTP request → ScanRequest: header metadata, whole-body zstd
// (Compression / Content-Encoding headers or the frame magic), dictionary selection, and
// the reply negotiation (msgpack, compressed reply).

import { MailsiftError } from '../http/errors.js';
import type { Request } from '../http/types.js';
import { hasZstdMagic, selectInputDictionary, zstdDecompressBounded, type DictionarySet } from '../http/zstd.js';
import { parseV2Headers, type ProtocolLog } from './parse-v2.js';
import type { ReplyLayout, ScanRequest } from './scan-request.js';

export interface DecodeOptions {
  maxMessage: number;
  dictionaries: DictionarySet;
  log?: ProtocolLog;
}

function isZstdRequest(req: Request): boolean {
  const comp = req.headers.first('compression');
  if (comp !== undefined) {
    if (comp.trim().toLowerCase() !== 'zstd') throw new MailsiftError('ERR_COMPRESSION_METHOD', 'Invalid compression method');
    return true;
  }
  const enc = req.headers.first('content-encoding');
  if (enc !== undefined && enc.toLowerCase().includes('zstd')) return true;
  return hasZstdMagic(req.body);
}

export function decodeV2Request(req: Request, layout: ReplyLayout, opts: DecodeOptions): ScanRequest {
  const meta = parseV2Headers(req.headers, opts.log);
  let message = req.body;
  const compressed = isZstdRequest(req);
  if (compressed) {
    const dict = selectInputDictionary(req.headers.first('dictionary'), opts.dictionaries);
    message = zstdDecompressBounded(message, opts.maxMessage, dict);
  }
  const accept = req.headers.first('accept') ?? '';
  const acceptEnc = req.headers.first('accept-encoding') ?? '';
  return {
    message,
    meta,
    want: {
      layout,
      msgpack: accept.includes('application/msgpack'),
      compress: compressed || meta.flags.has('zstd') || acceptEnc.toLowerCase().includes('zstd'),
    },
  };
}
