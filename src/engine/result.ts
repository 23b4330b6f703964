// Builds the ScanResult of a finished task: verdict, symbols, groups,
// messages, URLs and e-mails, message-id, milter block, rewritten message and timings.
// Rendering to JSON/msgpack/v1 text is the protocol layer's job.

import type { FoundUrl, GroupResult, Message, ScanResult, UrlInfo } from '../plugin-api/index.js';
import type { AppliedSettings, VerdictExplanation } from '../core/scan-types.js';
import { thresholds } from './actions.js';
import type { ScanTask } from './task.js';

export function buildResult(task: ScanTask): ScanResult {
  const v = task.finalVerdict ?? task.buildVerdict();
  const symbols = task.symbolResults();
  const res: ScanResult = {
    isSkipped: task.skipped,
    score: Number.isFinite(v.score) ? v.score : 0,
    requiredScore: v.requiredScore,
    action: v.action,
    thresholds: thresholds(task.actions),
    symbols,
    groups: groupResults(task),
    messages: task.messages,
    timeReal: (performance.now() - task.startedAt) / 1000,
    newline: task.newline,
  };
  if (v.preResult) {
    res.passthroughModule = v.preResult.module;
    if (v.preResult.message && task.messages.smtp_message === undefined) task.messages.smtp_message = v.preResult.message;
  }
  if (v.subject !== undefined) res.subject = v.subject;
  const milterAttr = task.actions.find((a) => a.name === v.action)?.milter ?? task.core.milterAttrs.get(v.action);
  if (milterAttr) res.reject = milterAttr;
  if (task.profile) res.profile = Object.assign(task.profile, task.allItemTimes());
  res.symbolTimes = task.itemTimesOf(symbols.map((s) => s.name));
  const dns = task.dnsStats;
  if (dns.used > 0) res.dnsRequests = dns.used;
  if (dns.failures) res.dnsFailures = { ...dns.failures, names: [...dns.failures.names] };
  const explain = explanationOf(task);
  if (explain) res.explain = explain;
  if (task.flags.has('no_log')) res.noLog = true;
  if (task.requestSkip) return res;
  if (!task.empty) {
    const message = task.message;
    res.messageId = message.messageId ?? 'undef';
    addUrls(res, message);
  }
  if (task.milterReply) res.milter = task.milterReply;
  if (task.dkimSignatures) res.dkimSignatures = task.dkimSignatures;
  if (task.rewritten) {
    res.rewritten = task.rewritten;
    res.rewrittenBodyOffset = bodyOffset(task.rewritten);
  }
  return res;
}

/** Composites, group limits and settings that shaped the score; undefined when none did. */
function explanationOf(task: ScanTask): VerdictExplanation | undefined {
  const out: VerdictExplanation = {};
  const sc = task.scoring;
  if (sc.cappedGroups.size > 0) out.cappedGroups = [...sc.cappedGroups];
  if (sc.compositeConsumed.size > 0) out.composites = Object.fromEntries(sc.compositeConsumed);
  const st = task.settings;
  const applied: AppliedSettings = {};
  if (st.id !== undefined) applied.id = st.id;
  if (st.actions.length > 0) applied.actions = Object.fromEntries(st.actions);
  if (st.scores && st.scores.size > 0) applied.scores = [...st.scores.keys()];
  if (st.whitelist) applied.whitelist = true;
  if (st.allowed !== null || st.denied !== null) applied.symbolsLimited = true;
  if (Object.keys(applied).length > 0) out.settings = applied;
  return Object.keys(out).length > 0 ? out : undefined;
}

function groupResults(task: ScanTask): GroupResult[] {
  const seen = new Set<string>();
  const out: GroupResult[] = [];
  const groups = task.core.registry.groups;
  for (const s of task.scoring.symbols.values()) {
    if (s.ignored) continue;
    for (const g of s.groups) {
      if (seen.has(g)) continue;
      seen.add(g);
      const r: GroupResult = { name: g, score: task.scoring.groupTotals.get(g) ?? 0 };
      const description = groups.get(g)?.description;
      if (description !== undefined) r.description = description;
      out.push(r);
    }
  }
  return out;
}

function toUrlInfo(u: FoundUrl): UrlInfo {
  const info: UrlInfo = { url: u.url, flags: [...u.flags] };
  if (u.host) info.host = u.host;
  if (u.tld) info.tld = u.tld;
  if (u.isEmail) info.isEmail = true;
  return info;
}

/** `urls` (non-e-mail URLs) and `emails` (de-duplicated), present when either is non-empty. */
function addUrls(res: ScanResult, message: Message): void {
  const urls: UrlInfo[] = [];
  const emails = new Set<string>();
  for (const u of message.urls) {
    if (u.isEmail) {
      const addr = u.url.replace(/^mailto:/i, '').replace(/\?.*$/, '');
      if (addr) emails.add(addr);
    } else {
      urls.push(toUrlInfo(u));
    }
  }
  for (const e of message.emails) if (e.address) emails.add(e.address);
  if (urls.length === 0 && emails.size === 0) return;
  res.urls = urls;
  res.emails = [...emails];
}

/** Offset just past the blank line that ends the header block (the whole length if none). */
export function bodyOffset(buf: Buffer): number {
  const crlf = buf.indexOf('\r\n\r\n');
  const lf = buf.indexOf('\n\n');
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return crlf + 4;
  if (lf >= 0) return lf + 2;
  return buf.length;
}
