// ScanResult → the HTTP reply of /checkv2 and the v1 paths: JSON or msgpack, the body block
// (`Message-Offset`, whole message or body only with `milter`), then zstd over all of it.

import { encode as msgpackEncode } from '@msgpack/msgpack';
import type { Reply } from '../http/types.js';
import { zstdCompress, type DictionarySet } from '../http/zstd.js';
import type { ScanMeta, ScanResult } from '../core/scan-types.js';
import { emitReplyJson, type ReplyValue } from './json-emit.js';
import { renderLegacy } from './render-legacy.js';
import { renderV2, type RenderOptions } from './render-v2.js';
import type { ReplyWant } from './scan-request.js';

export function renderResultObject(result: ScanResult, meta: ScanMeta, layout: ReplyWant['layout']): { [k: string]: ReplyValue } {
  const opts: RenderOptions = { flags: meta.flags, extendedUrls: meta.urlFormat === 'extended' || meta.flags.has('ext_urls') };
  if (layout === 'v1') return renderLegacy(result, opts);
  return renderV2(result, opts, layout === 'v2');
}

export function serializeResult(obj: { [k: string]: ReplyValue }, msgpack: boolean): Buffer {
  return msgpack ? Buffer.from(msgpackEncode(obj)) : Buffer.from(emitReplyJson(obj));
}

/** The rewritten bytes to append: the whole message, or only its body for milters. */
export function bodyBlockOf(result: ScanResult, milter: boolean): Buffer | undefined {
  if (!result.rewritten) return undefined;
  if (!milter) return result.rewritten;
  return result.rewritten.subarray(result.rewrittenBodyOffset ?? 0);
}

export function buildV2Reply(result: ScanResult, meta: ScanMeta, want: ReplyWant, dicts: DictionarySet): Reply {
  const payload = serializeResult(renderResultObject(result, meta, want.layout), want.msgpack);
  const headers: Array<[string, string]> = [];
  let body = payload;
  const block = meta.flags.has('body_block') ? bodyBlockOf(result, meta.flags.has('milter')) : undefined;
  if (block) {
    headers.push(['Message-Offset', String(payload.length)]);
    body = Buffer.concat([payload, block]);
  }
  if (want.compress) {
    try {
      body = zstdCompress(body, dicts.output?.data);
      headers.push(['Compression', 'zstd'], ['Content-Encoding', 'zstd']);
      if (dicts.output && dicts.output.id !== 0) headers.push(['Dictionary', String(dicts.output.id)]);
    } catch {
      // A failed compression sends the plain body without the headers, as Rspamd does.
    }
  }
  return {
    status: 200,
    contentType: want.msgpack ? 'application/msgpack' : 'application/json',
    headers,
    body,
  };
}
