// replies: remember the Message-ID of mail our authenticated users send; an
// incoming message that answers one (In-Reply-To / References) gets REPLY, a negative score,
// and optionally a forced action.

import { createHash } from 'node:crypto';
import { defineModule } from '../../plugin-api/index.js';
import type { KvStore, SymbolDef, Task } from '../../plugin-api/index.js';
import { isLocalAddress } from '../../module-helpers/local-address.js';
import { RepliesConfig } from './config.js';
import { kvOrDisable } from '../../module-helpers/policy-setup.js';
import { storeOutageLog, type StoreOutage } from '../../module-helpers/outage-log.js';

export const REPLIES_SYMBOLS: Record<string, SymbolDef> = {
  REPLY: { score: -4.0, group: 'replies', description: 'Message is a reply to a message sent by one of our users' },
  REPLIES_CHECK: { score: 0, group: 'replies', description: 'Replies checked' },
};

/** Message-IDs read from References: a thread can be long, each costs one store read. */
export const MAX_REFERENCES = 20;

function storeKey(prefix: string, msgid: string): string {
  return `${prefix}:${createHash('sha256').update(msgid.toLowerCase()).digest('base64url').slice(0, 32)}`;
}

function isOutbound(task: Task, cfg: RepliesConfig): boolean {
  return Boolean(task.meta.user) || (cfg.store_local && isLocalAddress(task.meta.ip));
}

/** Message-IDs of a header value: bracketed ones, or bare tokens (Rspamd's tests send `0002`). */
function idsOf(value: string): string[] {
  return value
    .split(/[\s,]+/)
    .map((t) => t.replace(/^<|>$/g, ''))
    .filter((t) => t !== '');
}

/** Message-IDs this message answers: In-Reply-To first, then the newest References. */
export function repliedIds(task: Task): string[] {
  const h = task.message.headers;
  const irt = h.get('In-Reply-To').flatMap((x) => idsOf(x.value));
  // References lists the thread oldest first; the newest ones are likeliest ours.
  const refs = h.get('References').flatMap((x) => idsOf(x.value)).reverse();
  return [...new Set([...irt, ...refs])].slice(0, MAX_REFERENCES);
}

async function check(task: Task, cfg: RepliesConfig, kv: KvStore, outage: StoreOutage): Promise<void> {
  if (isOutbound(task, cfg)) return;
  const ids = repliedIds(task);
  if (ids.length === 0) return;
  let found: string | undefined;
  try {
    const hits = await Promise.all(ids.map((id) => kv.get(storeKey(cfg.key_prefix, id))));
    found = ids[hits.findIndex((v) => v !== undefined)];
  } catch (e) {
    outage(task, 'replies not checked', e);
    return;
  }
  if (found === undefined) return;
  task.insert(cfg.symbol, 1, [found]);
  if (cfg.action) task.setPreResult({ action: cfg.action, message: cfg.message, module: 'replies' });
}

async function remember(task: Task, cfg: RepliesConfig, kv: KvStore, outage: StoreOutage): Promise<void> {
  if (!isOutbound(task, cfg)) return;
  const id = task.message.messageId;
  if (!id) return;
  try {
    await kv.set(storeKey(cfg.key_prefix, id), '1', cfg.expire * 1000);
  } catch (e) {
    outage(task, 'Message-ID not saved', e);
  }
}

export const repliesModule = defineModule<RepliesConfig>({
  name: 'replies',
  config: RepliesConfig,
  symbols: REPLIES_SYMBOLS,
  setup(ctx) {
    const cfg = ctx.config;
    const kv = kvOrDisable(ctx, 'replies');
    if (!kv) return;
    const outage = storeOutageLog(ctx.log, 'replies');
    ctx.symbol({
      name: 'REPLIES_CHECK',
      stage: 'prefilters',
      flags: ['coro', 'nostat'],
      inserts: [cfg.symbol],
      check: (task) => check(task, cfg, kv, outage),
    });
    ctx.symbol({
      name: 'REPLIES_SET',
      stage: 'idempotent',
      flags: ['coro', 'nostat', 'ignore_passthrough'],
      check: (task) => remember(task, cfg, kv, outage),
    });
  },
});
