// ScanResult → the /checkv2 reply object, keys in Rspamd 3.4's order.
// The object is plain data: emitJson() writes it with Rspamd's number format, msgpack
// encodes it as is. `thresholds`/`passthrough_module` (3.5+) are left out to match 3.4.

import type { MilterReply, ScanFlag, ScanResult, SymbolResult, UrlInfo } from '../core/scan-types.js';
import { setField, type ReplyValue } from './json-emit.js';

export interface RenderOptions {
  flags: ReadonlySet<ScanFlag>;
  extendedUrls: boolean;
  /** Emit the 3.5+ keys (`thresholds`, `passthrough_module`). */
  modernKeys?: boolean;
}

type Obj = { [k: string]: ReplyValue };

export function renderSymbol(s: SymbolResult, withMetric: boolean): Obj {
  const o: Obj = { name: s.name, score: s.score };
  if (withMetric) o.metric_score = s.metricScore;
  if (s.description !== undefined) o.description = s.description;
  if (s.options && s.options.length > 0) o.options = s.options;
  return o;
}

export function renderUrl(u: UrlInfo): Obj {
  const o: Obj = { url: u.url };
  if (u.tld !== undefined) o.tld = u.tld;
  if (u.host !== undefined) o.host = u.host;
  o.flags = u.flags;
  if (u.linkedUrl) o.linked_url = renderUrl(u.linkedUrl);
  return o;
}

/** Default `urls`: host names, de-duplicated, mailto and host-less URLs left out. */
export function urlHosts(urls: UrlInfo[]): string[] {
  const seen = new Set<string>();
  for (const u of urls) {
    if (u.isEmail || !u.host) continue;
    seen.add(u.host);
  }
  return [...seen];
}

export function renderMilter(m: MilterReply): Obj {
  // MilterReply is already the wire shape; copy keys that are set, keeping their order.
  const o: Obj = {};
  for (const [k, v] of Object.entries(m)) if (v !== undefined) setField(o, k, v as ReplyValue);
  return o;
}

/** Everything after the symbols: shared by v2, /skip and the v1 legacy layout. */
export function renderTail(r: ScanResult, opts: RenderOptions, o: Obj, milterKey: 'milter' | 'rmilter'): void {
  o.messages = { ...r.messages };
  if (r.urls !== undefined || r.emails !== undefined) {
    const urls = r.urls ?? [];
    o.urls = opts.extendedUrls ? urls.map(renderUrl) : urlHosts(urls);
    o.emails = r.emails ?? [];
  }
  if (opts.flags.has('profile')) o.profile = { ...(r.profile ?? {}) };
  if (r.messageId !== undefined) o['message-id'] = r.messageId;
  o.time_real = r.timeReal;
  if (r.dkimSignatures && r.dkimSignatures.length > 0) {
    o['dkim-signature'] = r.dkimSignatures.length === 1 ? r.dkimSignatures[0]! : r.dkimSignatures;
  }
  if (r.milter && Object.keys(r.milter).length > 0) o[milterKey] = renderMilter(r.milter);
}

export function renderGroups(r: ScanResult): Obj {
  const g: Obj = {};
  for (const grp of r.groups) {
    const e: Obj = { score: grp.score };
    if (grp.description !== undefined) e.description = grp.description;
    setField(g, grp.name, e);
  }
  return g;
}

/** The /checkv2 (and v3 `result`) object. `withMetric` false gives the /skip variant. */
export function renderV2(r: ScanResult, opts: RenderOptions, withMetric = true): Obj {
  const o: Obj = {};
  if (opts.modernKeys && r.passthroughModule !== undefined) o.passthrough_module = r.passthroughModule;
  o.is_skipped = r.isSkipped;
  o.score = r.score;
  o.required_score = r.requiredScore;
  o.action = r.action;
  if (r.subject !== undefined && r.action === 'rewrite subject') o.subject = r.subject;
  if (r.reject !== undefined) o.reject = r.reject;
  if (opts.modernKeys) {
    const t: Obj = {};
    for (const [name, v] of r.thresholds) setField(t, name, v);
    o.thresholds = t;
  }
  const symbols: Obj = {};
  for (const s of r.symbols) setField(symbols, s.name, renderSymbol(s, withMetric));
  o.symbols = symbols;
  if (opts.flags.has('groups')) o.groups = renderGroups(r);
  renderTail(r, opts, o, 'milter');
  return o;
}
