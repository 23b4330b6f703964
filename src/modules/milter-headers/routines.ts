// The milter_headers routines: each reads the verdict and task facts and emits header additions
// and removals into an Output. Names, default headers and values follow Rspamd.
import type { Task, Verdict } from '../../plugin-api/index.js';
import type { RoutineOptions } from './config.js';
import { isSpamAction, preResult, spamdBar, spamdResult, spamLevel, spamStatus } from './format.js';
import { authResultRows } from '../../module-helpers/auth-results.js';

export type RemoveSpec = number | number[];

export interface Output {
  add(name: string, value: string, order?: number): void;
  remove(name: string, spec: RemoveSpec): void;
}

export interface RoutineContext {
  task: Task;
  verdict: Verdict;
  newline: string;
  hostname: string;
  opts: RoutineOptions;
  out: Output;
}

type Routine = (c: RoutineContext) => void;

/** Default options of every routine; `routines.<name>` in config is merged over these. */
export const ROUTINE_DEFAULTS: Record<string, RoutineOptions> = {
  'x-spamd-result': { header: 'X-Spamd-Result', remove: 0, sort_by: 'score' },
  'x-rspamd-pre-result': { header: 'X-Rspamd-Pre-Result', remove: 0 },
  'x-rspamd-server': { header: 'X-Rspamd-Server', remove: 0 },
  'x-rspamd-queue-id': { header: 'X-Rspamd-Queue-Id', remove: 0 },
  'x-rspamd-action': { header: 'X-Rspamd-Action', remove: 0 },
  'x-service-action': { header: 'X-Service-Action', remove: 0 },
  'x-spamd-bar': { header: 'X-Spamd-Bar', remove: 0, positive: '+', negative: '-', neutral: '/' },
  'x-spam-level': { header: 'X-Spam-Level', remove: 0, char: '*' },
  'x-spam-status': { header: 'X-Spam-Status', remove: 0 },
  'spam-header': { header: 'Deliver-To', value: 'Junk', remove: 0 },
  'remove-spam-flag': { header: 'X-Spam' },
  'x-virus': { header: 'X-Virus', remove: 0, symbols: [], symbols_fail: [] },
  'authentication-results': { header: 'Authentication-Results', remove: 0, add_smtp_user: true, order: 1 },
  // Their values come from statistics, fuzzy and p0f, which do not exist yet: remove-only for now.
  'stat-signature': { header: 'X-Stat-Signature', remove: 0 },
  'fuzzy-hashes': { header: 'X-Rspamd-Fuzzy', remove: 0 },
  'x-os-fingerprint': { header: 'X-OS-Fingerprint', remove: 0 },
  'remove-header': { remove: 0 },
  'remove-headers': { headers: {} },
  'add-headers': { headers: {}, remove: 0 },
};

/** Emits the routine's "drop upstream copies" instruction unless `remove` is false/null. */
function removeOwn(c: RoutineContext): void {
  const { header, remove } = c.opts;
  if (header && remove !== undefined && remove !== null && remove !== false) c.out.remove(header, remove);
}

function addOwn(c: RoutineContext, value: string): void {
  c.out.add(c.opts.header!, value, c.opts.order ?? -1);
}

/** One header with a computed value (or none when the value is undefined). */
const simple =
  (value: (c: RoutineContext) => string | undefined): Routine =>
  (c) => {
    removeOwn(c);
    const v = value(c);
    if (v !== undefined) addOwn(c, v);
  };

const authResults: Routine = (c) => {
  removeOwn(c);
  const { task } = c;
  const user = task.meta.user;
  // Results of the spf/dkim/dmarc/arc modules (when they ran), then the SMTP AUTH result.
  const rows = authResultRows(task);
  if (user && c.opts.add_smtp_user !== false) {
    let res = `auth=pass smtp.auth=${user}`;
    const from = task.envelopeFrom?.address;
    if (from) res += ` smtp.mailfrom=${from}`;
    rows.push(res);
  }
  if (rows.length === 0) return;
  const host = task.meta.mtaName ?? task.meta.mtaTag ?? c.hostname;
  addOwn(c, `${host};${c.newline}\t${rows.join(`;${c.newline}\t`)}`);
};

const xVirus: Routine = (c) => {
  removeOwn(c);
  const found: string[] = [];
  for (const name of c.opts.symbols ?? []) {
    const s = c.task.getSymbol(name);
    if (s) found.push(...(s.options?.length ? s.options : [name]));
  }
  if (found.length) {
    addOwn(c, c.opts.status_infected ? `${c.opts.status_infected}, ${found.join(',')}` : found.join(','));
    return;
  }
  for (const name of c.opts.symbols_fail ?? []) {
    const s = c.task.getSymbol(name);
    if (s && c.opts.status_fail) {
      addOwn(c, `${c.opts.status_fail}(${(s.options ?? [name]).join(',')})`);
      return;
    }
  }
  if (c.opts.status_clean) addOwn(c, c.opts.status_clean);
};

const removeHeaders: Routine = (c) => {
  for (const [name, spec] of Object.entries(c.opts.headers ?? {})) {
    c.out.remove(name, typeof spec === 'number' ? spec : 0);
  }
};

const addHeaders: Routine = (c) => {
  for (const [name, value] of Object.entries(c.opts.headers ?? {})) {
    const { remove } = c.opts;
    if (remove !== undefined && remove !== null && remove !== false) c.out.remove(name, remove);
    c.out.add(name, String(value), c.opts.order ?? -1);
  }
};

export const ROUTINES: Record<string, Routine> = {
  'x-spamd-result': (c) => {
    removeOwn(c);
    addOwn(c, spamdResult(c.verdict, c.newline, c.opts.sort_by));
    const pre = preResult(c.verdict);
    if (pre !== undefined) {
      const opts = { ...ROUTINE_DEFAULTS['x-rspamd-pre-result'] };
      ROUTINES['x-rspamd-pre-result']!({ ...c, opts });
    }
  },
  'x-rspamd-pre-result': simple((c) => preResult(c.verdict)),
  'x-rspamd-server': simple((c) => c.opts.hostname ?? c.hostname),
  'x-rspamd-queue-id': simple((c) => c.task.meta.queueId),
  'x-rspamd-action': simple((c) => c.verdict.action),
  'x-service-action': simple((c) => c.verdict.action),
  'x-spamd-bar': simple((c) => spamdBar(c.verdict.score, c.opts.positive, c.opts.negative, c.opts.neutral)),
  'x-spam-level': simple((c) => spamLevel(c.verdict.score, c.opts.char)),
  'x-spam-status': simple((c) => spamStatus(c.verdict)),
  'spam-header': simple((c) => (isSpamAction(c.verdict.action) ? c.opts.value : undefined)),
  'remove-spam-flag': (c) => c.out.remove(c.opts.header!, 0),
  'x-virus': xVirus,
  'authentication-results': authResults,
  'stat-signature': (c) => removeOwn(c),
  'fuzzy-hashes': (c) => removeOwn(c),
  'x-os-fingerprint': (c) => removeOwn(c),
  'remove-header': (c) => removeOwn(c),
  'remove-headers': removeHeaders,
  'add-headers': addHeaders,
};

/** Routines `extended_spam_headers` switches on. */
export const EXTENDED_ROUTINES = ['x-spamd-result', 'x-rspamd-server', 'x-rspamd-queue-id', 'x-rspamd-action'];
