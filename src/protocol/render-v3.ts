// The /checkv3 reply: a multipart envelope with a `result` part (JSON or msgpack) and, when
// a rule rewrote the message, a `body` part. Each part is compressed on its own when the
// client accepts zstd; the envelope itself never is. `Vary` says what was negotiated.

import { randomBytes } from 'node:crypto';
import type { Reply } from '../http/types.js';
import { zstdCompress } from '../http/zstd.js';
import type { ScanMeta, ScanResult } from '../core/scan-types.js';
import { bodyBlockOf, renderResultObject, serializeResult } from './reply-v2.js';
import type { ReplyWant } from './scan-request.js';

const BOUNDARY_PREFIX = randomBytes(8).toString('hex');
let boundaryCounter = 0;

function part(boundary: string, name: string, contentType: string, body: Buffer, compress: boolean): Buffer[] {
  let head = `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\nContent-Type: ${contentType}\r\n`;
  let payload = body;
  if (compress) {
    payload = zstdCompress(body);
    head += 'Content-Encoding: zstd\r\n';
  }
  return [Buffer.from(head + '\r\n', 'latin1'), payload, Buffer.from('\r\n')];
}

export function buildV3Reply(result: ScanResult, meta: ScanMeta, want: ReplyWant): Reply {
  const boundary = `mailsift-v3-${BOUNDARY_PREFIX}-${(boundaryCounter++).toString(16)}`;
  const resultBody = serializeResult(renderResultObject(result, meta, 'v2'), want.msgpack);
  const chunks = part(boundary, 'result', want.msgpack ? 'application/msgpack' : 'application/json', resultBody, want.compress);
  const block = bodyBlockOf(result, meta.flags.has('milter'));
  if (block) chunks.push(...part(boundary, 'body', 'application/octet-stream', block, want.compress));
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return {
    status: 200,
    contentType: `${want.multipartType ?? 'multipart/mixed'}; boundary="${boundary}"`,
    headers: [['Vary', 'Accept, Accept-Encoding']],
    body: Buffer.concat(chunks),
  };
}
