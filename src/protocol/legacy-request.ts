// A legacy spamc/RSPAMC request → what gets scanned: the body (spamc's `Compress: zlib` undone),
// the v2 headers it carries (IP, From, Rcpt, Settings, Queue-Id… work in both dialects), and the
// spamc `User:` dropped, since SpamAssassin's User names a local account, not an SMTP AUTH user.

import { inflateSync } from 'node:zlib';
import { MailsiftError } from '../http/errors.js';
import type { Request } from '../http/types.js';
import { decodeV2Request, type DecodeOptions } from './decode-v2.js';
import type { LegacyCompat } from './legacy-command.js';
import type { ScanRequest } from './scan-request.js';

/**
 * The message bytes of a legacy request. `Compress: zlib` (spamc -z, when built with zlib; the
 * Debian spamc is not) is a zlib stream whose Content-length counts the compressed bytes; its
 * output is bounded by `maxMessage`, as a decompression bomb would otherwise fill the heap.
 */
export function legacyBody(req: Request, maxMessage: number): Buffer {
  const method = req.headers.first('compress');
  if (method === undefined) return req.body;
  if (method.trim().toLowerCase() !== 'zlib') throw new MailsiftError('ERR_COMPRESSION_METHOD', 'Invalid compression method');
  try {
    return inflateSync(req.body, { maxOutputLength: maxMessage });
  } catch (err) {
    // Node's output bound surfaces as a RangeError; anything else is zlib naming the corruption.
    const why = err instanceof RangeError ? 'message larger than max_message' : String((err as Error).message);
    throw new MailsiftError('ERR_DECOMPRESSION', `Decompression error: ${why}`);
  }
}

/** The scan a legacy request asks for; its `Compression: zstd` and Shm/File sources work as in v2. */
export function decodeLegacyRequest(req: Request, opts: DecodeOptions): ScanRequest {
  const body = legacyBody(req, opts.maxMessage);
  const sr = decodeV2Request(body === req.body ? req : { ...req, body }, 'v2', opts);
  if (req.legacy === 'spamc') delete sr.meta.user;
  return sr;
}

/** Request headers a relay sets itself, or that frame only the client's leg. */
const HOP_HEADERS: ReadonlySet<string> = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'compress']);

/**
 * The headers of a legacy request as an upstream scanner should see them in the `/checkv2`
 * request the proxy builds, with the body from legacyBody. Rspamd 3.4's
 * proxy forwards a spamc `User:`, so the upstream takes it for an SMTP AUTH user while a direct
 * spamc connection ignores it; `spamd` mode drops it so both paths scan alike, `rspamd` keeps it.
 */
export function legacyRelayHeaders(req: Pick<Request, 'headers' | 'legacy'>, compat: LegacyCompat): Array<[string, string]> {
  const dropUser = req.legacy === 'spamc' && compat !== 'rspamd';
  return req.headers.raw.filter(([name]) => {
    const l = name.toLowerCase();
    return !HOP_HEADERS.has(l) && !(dropUser && l === 'user');
  });
}
