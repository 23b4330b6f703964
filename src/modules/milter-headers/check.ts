// The MILTER_HEADERS callback: picks the routines for this task, runs them against the final
// verdict, and turns their output into the reply's milter block (and the optional body rewrite).
import type { Logger, Task } from '../../plugin-api/index.js';
import { isLocalAddress } from '../../module-helpers/local-address.js';
import type { MilterHeadersConfig, RoutineOptions } from './config.js';
import { EXTENDED_ROUTINES, ROUTINE_DEFAULTS, ROUTINES } from './routines.js';
import type { Output, RemoveSpec } from './routines.js';
import { applyEdits } from './body-edit.js';
import type { Edit } from './body-edit.js';
import { footerEdits } from './footer.js';
import { subjectEdit } from './subject-edit.js';

export interface Prepared {
  /** Routines in the order they run, remove-spam-flag first as in Rspamd. */
  active: string[];
  options: Record<string, RoutineOptions>;
  local: Set<string>;
  authenticated: Set<string>;
  rcpt: string[];
}

/** Validates routine names and merges per-routine options once, at load. */
export function prepare(config: MilterHeadersConfig, log: Logger): Prepared {
  const wanted = new Set<string>();
  if (config.remove_upstream_spam_flag) wanted.add('remove-spam-flag');
  for (const r of config.use) wanted.add(r);
  if (config.extended_spam_headers) for (const r of EXTENDED_ROUTINES) wanted.add(r);
  const active: string[] = [];
  for (const r of wanted) {
    if (ROUTINES[r]) active.push(r);
    else log.warn('milter_headers: unknown routine ignored', { routine: r });
  }
  const options: Record<string, RoutineOptions> = {};
  for (const name of Object.keys(ROUTINES)) options[name] = { ...ROUTINE_DEFAULTS[name], ...config.routines[name] };
  return {
    active,
    options,
    local: new Set(config.local_headers),
    authenticated: new Set(config.authenticated_headers),
    rcpt: config.extended_headers_rcpt.map((r) => r.toLowerCase()),
  };
}

function rcptForcesHeaders(task: Task, wanted: string[]): boolean {
  if (wanted.length === 0) return false;
  return task.envelopeRcpt.some((r) => {
    const addr = r.address.toLowerCase();
    return wanted.some((w) => w === addr || w === r.local.toLowerCase() || (w.startsWith('@') && w.slice(1) === r.domain.toLowerCase()));
  });
}

class Collector implements Output {
  readonly adds: Array<[string, string, number]> = [];
  readonly removes = new Map<string, RemoveSpec>();
  add(name: string, value: string, order = -1): void {
    this.adds.push([name, value, order]);
  }
  remove(name: string, spec: RemoveSpec): void {
    this.removes.set(name, spec);
  }
}

export function makeMilterHeadersCheck(config: MilterHeadersConfig, p: Prepared, hostname: string): (task: Task) => void {
  return (task) => {
    // Skipped tasks (GTUBE, whitelist, Flags: skip) get no milter block, as in Rspamd.
    if (task.flags.has('skip')) return;
    const override = task.pluginSettings('milter_headers')?.['routines'];
    const forced = Array.isArray(override);
    const routines = forced ? override.filter((r): r is string => typeof r === 'string' && ROUTINES[r] !== undefined) : p.active;

    const skip = (routine: string): boolean => {
      // Upstream spam flags are dropped for every sender, authenticated users included (as Rspamd 3.4 does).
      if (forced || routine === 'remove-spam-flag' || rcptForcesHeaders(task, p.rcpt)) return false;
      if (config.skip_all) return true;
      if (config.skip_local && !p.local.has(routine) && isLocalAddress(task.meta.ip)) return true;
      if (config.skip_authenticated && !p.authenticated.has(routine) && task.meta.user) return true;
      return false;
    };

    const out = new Collector();
    const verdict = task.verdict();
    for (const name of routines) {
      if (skip(name)) continue;
      ROUTINES[name]!({ task, verdict, newline: task.foldNewline, hostname, opts: p.options[name] ?? {}, out });
      if (name === 'x-service-action') task.setMilter({ no_action: true });
    }
    if (out.removes.size) task.setMilter({ remove_headers: Object.fromEntries(out.removes) });
    for (const [name, value, order] of out.adds) task.addMilterHeader(name, value, order);

    rewriteBody(task, config, verdict.action, verdict.subject);
  };
}

function rewriteBody(task: Task, config: MilterHeadersConfig, action: string, subject: string | undefined): void {
  const edits: Edit[] = [];
  const footer = config.footer;
  const wantFooter = footer && (footer.text || footer.html) && (footer.actions.length === 0 || footer.actions.includes(action));
  const wantSubject = config.rewrite_subject_in_message && action === 'rewrite subject' && subject !== undefined;
  if (!wantFooter && !wantSubject) return;
  const msg = task.message;
  if (wantFooter) edits.push(...footerEdits(msg, footer));
  if (wantSubject) edits.push(subjectEdit(msg, subject));
  if (edits.length) task.rewriteMessage(applyEdits(msg.raw, edits));
}
