// rspamc 3.4's text renderings of a scan reply, so scripts that grep rspamc output
// (`Action:`, `Score: x / y`, `Symbol: NAME (score)[options]`) work on mailsiftc output too.
import type { ScanReply, ScanResultBody } from './types.js';

export const CLIENT_VERSION = '0.1.0';

/** rspamc counts these actions as spam (everything ranked above greylist). */
const SPAM_ACTIONS = new Set(['reject', 'soft reject', 'soft_reject', 'rewrite subject', 'rewrite_subject', 'add header', 'add_header']);
/** Actions rspamc knows; for any other (custom) action it prints no `Spam:` line. */
const KNOWN_ACTIONS = new Set([...SPAM_ACTIONS, 'greylist', 'no action', 'no_action']);
/** rspamc caps the X-Spam-Level stars at 32. */
const MAX_LEVEL_STARS = 32;

export interface RenderOptions {
  /** Seconds from send to reply, printed in the `Results for file` line. */
  elapsedSec: number;
  /** Bold/colour like rspamc on a terminal. */
  tty?: boolean;
}

const bold = (s: string, tty: boolean | undefined): string => (tty ? `\x1b[1m${s}\x1b[0m` : s);

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

function isSpam(action: string): boolean {
  return SPAM_ACTIONS.has(action.toLowerCase());
}

function colourAction(action: string, tty: boolean | undefined): string {
  if (!tty) return action;
  const a = action.toLowerCase();
  if (a === 'reject') return `\x1b[31m${action}\x1b[0m`;
  if (a === 'no action' || a === 'no_action') return `\x1b[32m${action}\x1b[0m`;
  if (a.includes('header') || a.includes('subject')) return `\x1b[33m${action}\x1b[0m`;
  if (KNOWN_ACTIONS.has(a)) return `\x1b[90m${action}\x1b[0m`;
  return bold(action, tty);
}

/** The `[Metric: default]` … symbol lines block. */
function renderMetric(r: ScanResultBody, tty: boolean | undefined): string {
  let out = '[Metric: default]\n';
  if (typeof r.action === 'string') {
    out += `Action: ${colourAction(r.action, tty)}\n`;
    if (KNOWN_ACTIONS.has(r.action.toLowerCase())) out += `Spam: ${isSpam(r.action) ? 'true' : 'false'}\n`;
  }
  if (typeof r.subject === 'string') out += `Subject: ${bold(r.subject, tty)}\n`;
  if (r.score !== undefined && r.required_score !== undefined) {
    out += `Score: ${bold(num(r.score).toFixed(2), tty)} / ${bold(num(r.required_score).toFixed(2), tty)}\n`;
  }
  const symbols = r.symbols && typeof r.symbols === 'object' ? Object.entries(r.symbols) : [];
  // rspamc sorts by name with strcmp, i.e. by bytes, not by locale.
  symbols.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [name, sym] of symbols) {
    out += `Symbol: ${name} `;
    if (sym && typeof sym === 'object' && 'score' in sym) out += `(${num(sym.score).toFixed(2)})`;
    if (sym && Array.isArray(sym.options)) out += `[${sym.options.map(String).join(', ')}]`;
    out += '\n';
  }
  return out;
}

/** Everything rspamc prints for one scanned file (symbols command, default output). */
export function renderScanText(filename: string, reply: Pick<ScanReply, 'result' | 'rewritten'>, opts: RenderOptions): string {
  const r = reply.result;
  let out = `Results for file: ${bold(filename, opts.tty)} (${opts.elapsedSec.toFixed(3)} seconds)\n`;
  out += renderMetric(r, opts.tty);
  if (typeof r['message-id'] === 'string') out += `Message-ID: ${r['message-id']}\n`;
  if (typeof r['queue-id'] === 'string') out += `Queue-ID: ${r['queue-id']}\n`;
  if (r.urls !== undefined) out += `Urls: ${JSON.stringify(r.urls)}\n`;
  if (r.emails !== undefined) out += `Emails: ${JSON.stringify(r.emails)}\n`;
  if (typeof r.error === 'string') out += `Scan error: ${r.error}\n`;
  if (r.messages && typeof r.messages === 'object' && !Array.isArray(r.messages)) {
    for (const [key, value] of Object.entries(r.messages)) {
      out += typeof value === 'string' ? `Message - ${key}: ${value}\n` : `Message - ${key}: ${JSON.stringify(value).slice(0, 60)}\n`;
    }
  }
  const dkim = r['dkim-signature'];
  for (const sig of typeof dkim === 'string' ? [dkim] : Array.isArray(dkim) ? dkim : []) out += `DKIM-Signature: ${sig}\n`;
  if (r.profile && typeof r.profile === 'object') {
    out += 'Profile data:\n';
    const entries = Object.entries(r.profile as Record<string, unknown>).sort(([, a], [, b]) => num(a) - num(b));
    for (const [name, t] of entries) out += `\t${name}: ${num(t)} usec\n`;
  }
  if (reply.rewritten !== undefined) out += `\nNew body:\n${reply.rewritten.toString('utf8')}\n`;
  return out + '\n';
}

/** Where the header block of a message ends (just after the last header line's newline), or -1. */
function endOfHeaders(msg: Buffer): { pos: number; nl: string } {
  const crlf = msg.indexOf('\r\n\r\n');
  const lf = msg.indexOf('\n\n');
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return { pos: crlf + 2, nl: '\r\n' };
  if (lf >= 0) return { pos: lf + 1, nl: '\n' };
  return { pos: -1, nl: msg.includes('\r\n') ? '\r\n' : '\n' };
}

/** rspamc folds the symbol list after every comma, one symbol per continuation line. */
function foldList(name: string, items: string[], nl: string): string {
  return `${name}: ${items.join(`,${nl}\t`)}`;
}

/**
 * rspamc's `-m` output: the message (the server's rewritten copy when it sent one) with
 * X-Spam-* headers describing the verdict added after the original headers.
 */
export function renderMimeOutput(original: Buffer, reply: Pick<ScanReply, 'result' | 'rewritten'> | undefined, elapsedSec: number, error?: string): Buffer {
  const msg = reply?.rewritten ?? original;
  const { pos, nl } = endOfHeaders(msg);
  const added: string[] = [`X-Spam-Scanner: mailsiftc ${CLIENT_VERSION}`, `X-Spam-Scan-Time: ${elapsedSec.toFixed(3)}`];
  if (reply) {
    const r = reply.result;
    const action = typeof r.action === 'string' ? r.action : 'no action';
    if (isSpam(action)) added.push('X-Spam: yes');
    added.push(`X-Spam-Action: ${action}`);
    const score = num(r.score);
    added.push(`X-Spam-Score: ${score.toFixed(2)} / ${num(r.required_score).toFixed(2)}`);
    added.push(`X-Spam-Level: ${'*'.repeat(Math.max(0, Math.ceil(Math.min(score, MAX_LEVEL_STARS))))}`);
    added.push(foldList('X-Spam-Symbols', Object.keys(r.symbols ?? {}), nl));
    const dkim = r['dkim-signature'];
    for (const sig of typeof dkim === 'string' ? [dkim] : Array.isArray(dkim) ? dkim : []) added.push(`DKIM-Signature: ${sig}`);
  } else {
    added.push(`X-Spam-Error: ${error ?? 'scan failed'}`);
  }
  const block = Buffer.from(added.map((h) => h + nl).join(''), 'utf8');
  if (pos < 0) return Buffer.concat([msg, msg.length && !msg.subarray(-1).equals(Buffer.from('\n')) ? Buffer.from(nl) : Buffer.alloc(0), block]);
  return Buffer.concat([msg.subarray(0, pos), block, msg.subarray(pos)]);
}
