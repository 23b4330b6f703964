// /scan, /check and /checkv2 on the controller: the normal worker's
// protocol layer (the transport has already copied query parameters into the headers, so
// `?ip=…&from=…` works), and the scan counted and kept in the history like any other.
// /checkexplain (a mailsift addition, for the web UI's scan page) takes the same request as
// /checkv2 and answers the scan's history row instead: the verdict with its explanation
// (src/observability/history-row.ts), which the UI's verdict view reads.

import { classifyError } from '../../http/errors.js';
import type { Reply, Request } from '../../http/types.js';
import { loadDictionaries } from '../../http/zstd.js';
import { buildHistoryRow } from '../../observability/history-row.js';
import { decodeV2Request } from '../../protocol/decode-v2.js';
import { buildV2Reply } from '../../protocol/reply-v2.js';
import type { ReplyLayout } from '../../protocol/scan-request.js';
import type { CoreContext } from './core-context.js';
import { controllerError, jsonReply, markUncompressed } from './json.js';
import type { ControllerRoute } from './types.js';

export function scanRoutes(ctx: CoreContext): ControllerRoute[] {
  const dictionaries = loadDictionaries(undefined);
  const maxMessage = ctx.config.workers.normal.maxMessage;
  const scan = async (req: Request, layout: ReplyLayout, answer: 'reply' | 'row' = 'reply'): Promise<Reply> => {
    let sr;
    try {
      sr = decodeV2Request(req, layout, { maxMessage, dictionaries, log: ctx.log });
    } catch (err) {
      // A coded error is the request's fault and keeps its text; anything else is a bug for the
      // controller's one handler (index.ts errorToReply), which logs it before answering 500.
      const shape = classifyError(err);
      if (!shape.known) throw err;
      return controllerError(shape.status, shape.message);
    }
    const startedAt = Date.now();
    const t0 = process.hrtime.bigint();
    const result = await ctx.engine.scan(sr.message, sr.meta);
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    ctx.observeScan({ result, meta: sr.meta, message: sr.message, startedAt, seconds, legacy: layout === 'v1' });
    if (answer === 'row') return jsonReply(buildHistoryRow(result, sr.meta, sr.message, startedAt));
    return markUncompressed(buildV2Reply(result, sr.meta, sr.want, dictionaries));
  };
  return [
    { path: '/checkv2', level: 'normal', message: true, handler: (req) => scan(req, 'v2') },
    { path: '/check', level: 'normal', message: true, handler: (req) => scan(req, 'v1') },
    { path: '/scan', level: 'normal', message: true, handler: (req) => scan(req, 'v1') },
    { path: '/checkexplain', level: 'normal', message: true, handler: (req) => scan(req, 'v2', 'row') },
  ];
}
