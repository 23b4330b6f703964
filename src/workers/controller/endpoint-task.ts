// The task an endpoint handler gets (src/plugin-api/endpoints.ts): the request's headers and,
// for need_task endpoints, its body as a message that can be parsed, scanned with this
// controller's engine (the same modules as the scan workers) and learned by the modules'
// learners. Learning counts in the server's `learned` figure here, once per successful call.

import type { Request } from '../../http/types.js';
import { loadDictionaries } from '../../http/zstd.js';
import { parseMessage } from '../../message/parse-message.js';
import type { EndpointTask, LearnClass, LearnOptions, Message, ScanMeta, ScanResult } from '../../plugin-api/index.js';
import { decodeV2Request } from '../../protocol/decode-v2.js';
import type { ControllerContext } from './types.js';

function coded(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/**
 * Asks every learner; Rspamd's rules for the outcome: a classifier of another name is skipped, a
 * classifier whose conditions refused is skipped, and the call fails only when none learned.
 */
async function learnWith(ctx: ControllerContext, task: EndpointTask, cls: LearnClass, opts: LearnOptions): Promise<void> {
  const learners = ctx.engine.learners();
  if (learners.length === 0) throw coded('LEARN_NO_CLASSIFIER', 'no classifiers defined');
  let learned = 0;
  let unknown = 0;
  let denied: Error | undefined;
  let candidate = '';
  for (const l of learners) {
    try {
      await l.learn(task, cls, opts);
      learned++;
    } catch (err) {
      const code = (err as { code?: unknown })?.code;
      if (code === 'LEARN_CLASSIFIER_UNKNOWN') {
        unknown++;
        continue;
      }
      candidate = l.name;
      if (code === 'LEARN_CONDITIONS_DENIED') {
        denied = err as Error;
        continue;
      }
      throw err;
    }
  }
  if (learned > 0) {
    ctx.stats?.recorder.learned();
    return;
  }
  if (unknown === learners.length) throw coded('LEARN_CLASSIFIER_UNKNOWN', `cannot find classifier with name ${opts.classifier ?? ''}`);
  const asked = learners.length - unknown;
  if (asked === 1 && denied) throw denied;
  throw coded('LEARN_CONDITIONS_DENIED', `all learn conditions denied learning ${cls} in ${asked === 1 ? candidate : 'default classifier'}`);
}

/** Every endpoint reads the body (neural's learn takes JSON); need_task makes it required and allows scan() and learn(). */
export function makeEndpointTask(ctx: ControllerContext, req: Request, needTask: boolean): EndpointTask {
  const body = req.body;
  let parsed: Message | undefined;
  let decoded: { message: Buffer; meta: ScanMeta } | undefined;
  let scanned: Promise<ScanResult> | undefined;
  // The body as /checkv2 reads it (a zstd body decompressed within the message limit), and its metadata.
  const decode = () =>
    (decoded ??= decodeV2Request({ ...req, body }, 'v2', { maxMessage: ctx.config.workers.normal.maxMessage, dictionaries: loadDictionaries(undefined), log: ctx.log }));
  const header = (name: string) => req.headers.first(name);
  const task: EndpointTask = {
    content: body,
    get_content: () => body,
    getContent: () => body,
    message: () => (parsed ??= parseMessage(body)),
    getRequestHeader: header,
    get_request_header: header,
    getRequestHeaders: (name) => req.headers.all(name),
    meta: () => decode().meta,
    scan: () => {
      if (!needTask) return Promise.reject(new Error('scan() needs an endpoint registered with need_task: true'));
      return (scanned ??= Promise.resolve().then(() => {
        const d = decode();
        return ctx.engine.scan(d.message, d.meta);
      }));
    },
    learn: (cls, opts = {}) => {
      if (!needTask) return Promise.reject(new Error('learn() needs an endpoint registered with need_task: true'));
      if (cls !== 'spam' && cls !== 'ham') return Promise.reject(new Error(`learn(): class must be "spam" or "ham", not ${JSON.stringify(cls)}`));
      return learnWith(ctx, task, cls, opts);
    },
  };
  return task;
}
