// The v1 reply of /check, /symbols, /scan, /process, /report, /report_ifspam
// (Rspamd's v1 layout): scalars and symbols inside `default`, no metric_score,
// `is_spam`, and the milter block named `rmilter`.

import type { ScanResult } from '../core/scan-types.js';
import { setField, type ReplyValue } from './json-emit.js';
import { renderGroups, renderSymbol, renderTail, type RenderOptions } from './render-v2.js';

type Obj = { [k: string]: ReplyValue };

/**
 * Only `no action` keeps its built-in ham flag under a stock config (a configured greylist
 * threshold drops it), so every other action reports spam.
 */
function isSpam(action: string): boolean {
  return action !== 'no action';
}

export function renderLegacy(r: ScanResult, opts: RenderOptions): Obj {
  const d: Obj = {
    is_spam: isSpam(r.action),
    is_skipped: r.isSkipped,
    score: r.score,
    required_score: r.requiredScore,
    action: r.action,
  };
  if (r.subject !== undefined && r.action === 'rewrite subject') d.subject = r.subject;
  if (r.reject !== undefined) d.reject = r.reject;
  for (const s of r.symbols) setField(d, s.name, renderSymbol(s, false));
  const o: Obj = { default: d };
  if (opts.flags.has('groups')) o.groups = renderGroups(r);
  renderTail(r, opts, o, 'rmilter');
  return o;
}
