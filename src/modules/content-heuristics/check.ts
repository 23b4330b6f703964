// The content heuristics: header and body signs of bulk unsolicited mail that Rspamd has no rule
// for. Every check reads only parsed message facts (no network, no stores).
import type { Task } from '../../plugin-api/index.js';
import { isLocalAddress } from '../../module-helpers/local-address.js';
import type { ContentHeuristicsConfig } from './config.js';
import { ADVANCE_FEE_THEMES, FREEMAIL_DOMAINS, SALES_PHRASES, STOCK_TOUT_THEMES } from './phrases.js';
import { gate, gatedTest } from './gate.js';
import { LiteralScanner } from './literal-scan.js';

/** A run of blanks inside the raw Subject (folding excluded: its newline breaks the run). */
const PADDED_SUBJECT = /\S[ \t]{5,}\S/;
/** Three zero-padded hex fields joined by `$`: what several bulk mailers put in Message-ID. */
// `0{2,}[0-9a-f]{2,}` is `00[0-9a-f]{2,}` (zeros are hex): written so, nothing backtracks over
// every split of a long run of zeros.
const RATWARE_MSGID = /^00[0-9a-f]{2,}\$000[0-9a-f]+\$000[0-9a-f]+@/i;
// "opted in" alone also turns up in prose about mailing lists; the claim is that *you* opted in.
const CONSENT = /\b(?:your (?:e-?mail )?address (?:was|has been) (?:obtained|collected|submitted)|you (?:signed up|requested|agreed) to receive|you (?:have |had )?opted[- ]in)\b/i;
/** The sender explains where it found the recipient's address: mail nobody asked for. */
const ADDRESS_SOURCE = /\b(?:found|got|obtained|came across) your (?:e-?mail|contact|address)\b(?![- ]?book)/i;
/** A salutation for a reader whose name the sender does not know. */
const GENERIC_SALUTATION = /\bdear (?:sirs? ?(?:or|\/|and|&) ?madam|friend|valued (?:customer|member))\b/i;
const OPT_OUT = /\bopt[- ]?(?:in|out)\b/i;
/** NANP toll-free prefixes 800/888/877/866 with a 3+4 digit number. */
const TOLL_FREE = /\b1?[-. (]*8(?:00|88|77|66)\)?[-. ]\d{3}[-. ]\d{4}\b/;
const SUBJECT_DOLLARS = /\$\d/;
/**
 * The labels laws require on unsolicited advertising subjects: `ADV:` (US states), 未承諾広告
 * (Japan) and (광고) (Korea). Two byte forms are matched as well, because the header decoder
 * leaves them as they are: Korean senders often put raw EUC-KR bytes in Subject without MIME
 * encoding (read as Latin-1, 광고 shows as `±¤°í`), and a raw ISO-2022-JP Subject without MIME
 * encoding stays as its JIS X 0208 bytes after the ESC $ B shift (encoded words are decoded).
 */
const SUBJECT_ADV = /^\s*ADV\s*[:-]|未承諾広告|\x1b\$BL\$>5Bz9-9p|[([]\s*(?:광고|\u00b1\u00a4\u00b0\u00ed)\s*[)\]]/i;
/** Date with a time and nothing after it: no zone, which RFC 5322 requires. */
const DATE_WITHOUT_ZONE = /\d{1,2}:\d{2}(?::\d{2})?\s*$/;
/** A run of three exclamation marks. */
const EXCLAIM_RUN = /!{3,}/;
/** Instructions to get off a list the recipient never joined knowingly. */
const REMOVE_LIST = /\bto (?:be )?remove(?:d)? (?:yourself|your (?:e-?mail )?(?:address|name)|from (?:our|this|future|the|all))\b|\bremove(?:d)? from (?:our|this|the|any|all) (?:future )?(?:mailing|e-?mail|distribution|list|database|mailings)/i;
/**
 * A message arguing that it is not spam, or that it needs no removal, or citing the 1998 US bill
 * bulk mailers liked to quote. The claim is about the message: "this is not a spam list" is a list
 * operator describing its list.
 */
const SPAM_DISCLAIMER = /\b(?:this|it) is not (?:a )?spam\b(?! list)|\bnot (?:an? )?unsolicited\b|\b(?:bill|s\.)\s*1618\b|\bone[- ]time (?:mailing|e-?mail|message)\b|\bno (?:further )?removal (?:is )?(?:necessary|required)\b/i;
/** Earnings claims: earn/make … $amount. */
const EARN_DOLLARS = /\b(?:earn|make|made|making)\b[^.\n]{0,30}\$\s?\d/i;
const IP_LITERAL = /^\[?\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\]?$/;
/** Distinct stock phrases from which BODY_SALES_PITCH starts, and the count at which it is full. */
const PITCH_FROM = 4;
const PITCH_FULL = 6;
/** Letters a text needs before its capitals share means anything, and the share that is shouting. */
const SHOUT_MIN_LETTERS = 200;
const SHOUT_SHARE = 0.4;
const HOUR_MS = 3_600_000;
/** Rspamd's DATE_IN_FUTURE margin (two hours past the scan time). */
const FUTURE_MARGIN_MS = 2 * HOUR_MS;
/** Different advance-fee themes a text needs for BODY_ADVANCE_FEE. */
const ADVANCE_FEE_MIN = 3;
/** Different stock-touting themes a text needs for BODY_STOCK_TOUT. */
const STOCK_TOUT_MIN = 3;
/** Characters of body text the text rules read. */
const MAX_TEXT_CHARS = 100_000;

/**
 * Visible text of every text part. The plain and HTML halves of an alternative repeat each other;
 * the text rules only ask whether a pattern occurs, so the repeat changes nothing.
 */
function bodyText(task: Task): string {
  const text = task.message.textParts.map((p) => p.text).join('\n');
  // The signs these rules look for sit near the top of a pitch; a huge body is not read whole,
  // so its cost stays bounded.
  return text.length > MAX_TEXT_CHARS ? text.slice(0, MAX_TEXT_CHARS) : text;
}

export function checkPaddedSubject(task: Task): void {
  const raw = task.message.headers.first('subject')?.raw;
  if (raw !== undefined && PADDED_SUBJECT.test(raw.trim())) task.insert('SUBJ_PADDED_TAG');
}

export function checkRatwareMsgid(task: Task): void {
  const mid = task.message.messageId;
  if (mid && RATWARE_MSGID.test(mid)) task.insert('MSGID_RATWARE_ZERO', 1, mid);
}

export function makeDateAfterReceived(cfg: ContentHeuristicsConfig): (task: Task) => void {
  return (task) => {
    const date = task.message.date;
    // The newest hop is the one our side of the relay chain wrote; its clock is the reference.
    const rcvd = task.received.find((h) => h.timestamp)?.timestamp;
    if (!date || !rcvd || Number.isNaN(date.getTime())) return;
    // A Date ahead of the scan's own clock is DATE_IN_FUTURE's (headers module) to judge; the same
    // wrong clock is one sign, not two.
    if (date.getTime() - Date.now() > FUTURE_MARGIN_MS) return;
    const ahead = (date.getTime() - rcvd.getTime()) / HOUR_MS;
    if (ahead > cfg.date_ahead_hours) task.insert('DATE_AFTER_RECEIVED', 1, `${Math.round(ahead)}h`);
  };
}

/**
 * Mail clients of free-mail users reply to From and seldom write a Reply-To; bulk senders set one
 * to collect answers in a throw-away free mailbox whatever From says. The domain is matched
 * exactly, as Rspamd's FREEMAIL_REPLYTO looks up the address's domain: a provider's other
 * services live on subdomains (groups.msn.com, the MSN Groups list server, puts the list address
 * in Reply-To), and nobody opens a mailbox there.
 */
export function makeReplytoFreemail(cfg: ContentHeuristicsConfig): (task: Task) => void {
  const free = new Set([...FREEMAIL_DOMAINS, ...cfg.freemail_domains.map((d) => d.toLowerCase())]);
  return (task) => {
    const rt = task.message.replyTo[0]?.domain?.toLowerCase();
    if (rt && free.has(rt)) task.insert('REPLYTO_AT_FREEMAIL', 1, rt);
  };
}

/** The single-symbol body rules, each with its literal gate. */
const BODY_RULES = ([
  ['BODY_CONSENT_CLAIM', CONSENT],
  ['BODY_OPT_OUT', OPT_OUT],
  ['BODY_TOLL_FREE', TOLL_FREE],
  ['BODY_REMOVE_LIST', REMOVE_LIST],
  ['BODY_SPAM_DISCLAIMER', SPAM_DISCLAIMER],
  ['BODY_EARN_DOLLARS', EARN_DOLLARS],
  ['BODY_ADDRESS_SOURCE', ADDRESS_SOURCE],
  ['BODY_GENERIC_SALUTATION', GENERIC_SALUTATION],
] as const).map(([name, re]) => ({ name, g: gate(re) }));
const SALES_GATED = SALES_PHRASES.map(gate);
const ADVANCE_FEE_GATED = ADVANCE_FEE_THEMES.map(gate);
const STOCK_TOUT_GATED = STOCK_TOUT_THEMES.map(gate);
const GATE_LITERALS = new LiteralScanner(
  [...BODY_RULES.map((r) => r.g), ...SALES_GATED, ...ADVANCE_FEE_GATED, ...STOCK_TOUT_GATED].flatMap((g) => g.anyOf ?? []),
);

export function checkBodyText(task: Task): void {
  const text = bodyText(task);
  if (!text) return;
  const found = GATE_LITERALS.scan(text);
  for (const r of BODY_RULES) if (gatedTest(r.g, text, found)) task.insert(r.name);
  let phrases = 0;
  for (const g of SALES_GATED) if (gatedTest(g, text, found)) phrases++;
  if (phrases >= PITCH_FROM) {
    const weight = Math.min(1, (phrases - PITCH_FROM + 1) / (PITCH_FULL - PITCH_FROM + 1));
    task.insert('BODY_SALES_PITCH', weight, String(phrases));
  }
  let themes = 0;
  for (const g of ADVANCE_FEE_GATED) if (gatedTest(g, text, found)) themes++;
  if (themes >= ADVANCE_FEE_MIN) task.insert('BODY_ADVANCE_FEE', 1, String(themes));
  let stock = 0;
  for (const g of STOCK_TOUT_GATED) if (gatedTest(g, text, found)) stock++;
  if (stock >= STOCK_TOUT_MIN) task.insert('BODY_STOCK_TOUT', 1, String(stock));
  if (EXCLAIM_RUN.test(text)) task.insert('BODY_EXCLAIM');
  const { letters, upper } = letterCounts(text);
  if (letters >= SHOUT_MIN_LETTERS) {
    if (upper / letters > SHOUT_SHARE) task.insert('BODY_SHOUTING', 1, `${Math.round((100 * upper) / letters)}%`);
  }
}

const LETTER = /\p{L}/u;
const UPPER_LETTER = /\p{Lu}/u;

/**
 * Letters and upper-case letters of a text, in UTF-16 units as the regexps count them. ASCII is
 * counted by code; only the few other characters of a mostly-ASCII body go through a Unicode
 * property test (deleting non-letters from the whole text cost twice as much).
 */
function letterCounts(text: string): { letters: number; upper: number } {
  let letters = 0;
  let upper = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) {
      if (c >= 0x41 && c <= 0x5a) { letters++; upper++; } else if (c >= 0x61 && c <= 0x7a) letters++;
      continue;
    }
    const ch = String.fromCodePoint(text.codePointAt(i)!);
    i += ch.length - 1;
    if (LETTER.test(ch)) {
      letters += ch.length;
      if (UPPER_LETTER.test(ch)) upper += ch.length;
    }
  }
  return { letters, upper };
}

export function checkDateNoZone(task: Task): void {
  const raw = task.message.headers.first('date')?.value;
  if (raw !== undefined && DATE_WITHOUT_ZONE.test(raw.trim())) task.insert('DATE_NO_TZ');
}

/**
 * HTML part that is a fragment without an <html> element. Mail clients and newsletter tools
 * write whole documents; bulk-sending scripts often paste a fragment into the body.
 */
export function checkHtmlFragment(task: Task): void {
  if (task.message.textParts.some((p) => p.kind === 'html' && p.html !== undefined && !p.empty && !p.html.tags.has('html'))) {
    task.insert('HTML_NO_ROOT');
  }
}

export function checkSubject(task: Task): void {
  const s = task.message.headers.first('subject')?.value;
  if (!s) return;
  if (SUBJECT_DOLLARS.test(s)) task.insert('SUBJ_MONEY');
  if (SUBJECT_ADV.test(s)) task.insert('SUBJ_ADV_LABEL');
}

/**
 * HTML-only mail that names no mail client: people write HTML mail in clients that add X-Mailer
 * or User-Agent, while bulk-sending scripts rarely bother.
 */
export function checkHtmlOnlyNoMua(task: Task): void {
  const parts = task.message.textParts;
  if (parts.length === 0 || parts.some((p) => p.kind !== 'html')) return;
  const h = task.message.headers;
  if (h.has('x-mailer') || h.has('user-agent')) return;
  // Outlook-style priority headers without X-MimeOLE are MISSING_MIMEOLE's sign of the same
  // missing client.
  if (h.has('x-msmail-priority') && !h.has('x-mimeole')) return;
  task.insert('HTML_ONLY_NO_MUA');
}

/**
 * X-Priority without any mail client named. Outlook and Outlook Express write X-Priority next to
 * X-Mailer; bulk-sending tools copy the priority header and leave the client out.
 */
export function checkPriorityNoMua(task: Task): void {
  const h = task.message.headers;
  if (!h.has('x-priority') || h.has('x-mailer') || h.has('user-agent')) return;
  // The same missing client is already counted by MISSING_MIMEOLE (X-MSMail-Priority without
  // X-MimeOLE) or HTML_ONLY_NO_MUA; one imitation is one sign.
  if (h.has('x-msmail-priority') && !h.has('x-mimeole')) return;
  const parts = task.message.textParts;
  if (parts.length > 0 && parts.every((p) => p.kind === 'html')) return;
  task.insert('XPRIO_NO_MUA');
}

export function checkReceivedHelo(task: Task): void {
  // With the HELO in the envelope, hfilter judges it; this reads the relay trail instead.
  if (task.meta.helo) return;
  const hop = task.received.find((h) => h.fromIp && !isLocalAddress(h.fromIp));
  const helo = hop?.fromHelo;
  if (!helo) return;
  if (IP_LITERAL.test(helo) || !helo.includes('.')) task.insert('RCVD_HELO_BARE', 1, helo);
}
