// What a multimap rule looks up: the values of its type, passed through its filter. Pure reads
// of Task facts; no map lookups here.

import { getDomain } from 'tldts';
import type { CompiledSelector, EmailAddress, Task } from '../../plugin-api/index.js';
import { MAX_ADDRESS_LIST_CHARS, MAX_HEADER_ADDRESSES } from '../../message/limits.js';
import type { MultimapRule } from './config.js';

/** Bytes of a content rule's input that are matched (a huge body must not stall the regexps). */
export const MAX_CONTENT_BYTES = 1 << 20;

/** One value to look up and, for addresses, the fall-back keys tried when it misses. */
export interface Candidate {
  keys: string[];
}

// From the start of a token only: from inside one it fails the same way (quadratic over 1 MB).
const ADDRESS_RE = /(?<![^\s<>"',;:()[\]])[^\s<>"',;:()[\]]+@[^\s<>"',;:()[\]]+/g;
/** /\s*\r?\n\s*\/g from the start of a blank run only (a run without a line break failed from each of its characters). */
const LINE_BREAK_RUN = /(?<!\s)\s*\n\s*/g;

/**
 * Addresses in a header rule's values, under the message layer's caps for address headers: a
 * To: of 100 000 addresses (or 128 of 4 000) is read no further than the parser reads it, so a
 * shipped rule per address header does not cost a second per scan.
 */
function addressesFromHeaders(values: readonly string[]): EmailAddress[] {
  const out: EmailAddress[] = [];
  let chars = 0;
  for (const value of values) {
    const text = value.length + chars > MAX_ADDRESS_LIST_CHARS ? value.slice(0, MAX_ADDRESS_LIST_CHARS - chars) : value;
    chars += text.length;
    for (const m of text.matchAll(ADDRESS_RE)) {
      if (out.length >= MAX_HEADER_ADDRESSES) return out;
      const address = m[0].toLowerCase();
      const at = address.lastIndexOf('@');
      out.push({ name: '', address, local: address.slice(0, at), domain: address.slice(at + 1) });
    }
    if (chars >= MAX_ADDRESS_LIST_CHARS) break;
  }
  return out;
}

/** A compiled `regexp:<re>` filter: the first capture group (or the whole match). */
function regexpFilter(filter: string | undefined): RegExp | undefined {
  if (!filter?.startsWith('regexp:')) return undefined;
  return new RegExp(filter.slice('regexp:'.length));
}

function applyRegexp(re: RegExp, value: string): string | undefined {
  const m = re.exec(value);
  if (!m) return undefined;
  return m[1] ?? m[0];
}

function addressCandidates(addrs: readonly EmailAddress[], filter: string | undefined, re: RegExp | undefined): Candidate[] {
  const out: Candidate[] = [];
  for (const a of addrs) {
    if (!a.address) continue;
    const addr = a.address.toLowerCase();
    const domain = a.domain.toLowerCase();
    const user = a.local.toLowerCase();
    switch (filter) {
      case undefined:
        // Rspamd tries the whole address, then the domain, then the user part.
        out.push({ keys: [addr, domain, user] });
        break;
      case 'email':
      case 'email:addr':
        out.push({ keys: [addr] });
        break;
      case 'email:domain':
        out.push({ keys: [domain] });
        break;
      case 'email:domain:tld':
        out.push({ keys: [getDomain(domain) ?? domain] });
        break;
      case 'email:user':
        out.push({ keys: [user] });
        break;
      case 'email:name':
        if (a.name) out.push({ keys: [a.name] });
        break;
      default:
        if (re) {
          const v = applyRegexp(re, addr);
          if (v !== undefined) out.push({ keys: [v] });
        }
    }
  }
  return out;
}

function hostCandidate(host: string | undefined, filter: string | undefined, re: RegExp | undefined): Candidate[] {
  if (!host) return [];
  const h = host.toLowerCase().replace(/\.$/, '');
  if (filter === 'tld') return [{ keys: [getDomain(h) ?? h] }];
  if (filter === 'top') return [{ keys: [h.slice(h.lastIndexOf('.') + 1)] }];
  if (filter?.startsWith('tld:regexp:')) {
    const v = applyRegexp(new RegExp(filter.slice('tld:regexp:'.length)), getDomain(h) ?? h);
    return v === undefined ? [] : [{ keys: [v] }];
  }
  if (re) {
    const v = applyRegexp(re, h);
    return v === undefined ? [] : [{ keys: [v] }];
  }
  return [{ keys: [h] }];
}

function one(v: string | undefined): Candidate[] {
  return v === undefined || v === '' ? [] : [{ keys: [v] }];
}

function fromAddresses(task: Task, rule: MultimapRule): EmailAddress[] {
  const smtp = task.envelopeFrom && task.envelopeFrom.address ? [task.envelopeFrom] : [];
  const mime = task.message.from;
  return pickSource(rule.extract_from, smtp, mime);
}

function rcptAddresses(task: Task, rule: MultimapRule): EmailAddress[] {
  const smtp = [...task.envelopeRcpt];
  const mime = [...task.message.to, ...task.message.cc];
  return pickSource(rule.extract_from, smtp, mime);
}

function pickSource(from: MultimapRule['extract_from'], smtp: EmailAddress[], mime: readonly EmailAddress[]): EmailAddress[] {
  if (from === 'smtp') return smtp;
  if (from === 'mime') return [...mime];
  if (from === 'both') return [...smtp, ...mime];
  return smtp.length > 0 ? smtp : [...mime];
}

function urlCandidates(task: Task, filter: string | undefined, re: RegExp | undefined): Candidate[] {
  const out: Candidate[] = [];
  for (const u of task.message.urls) {
    if (u.isEmail) continue;
    switch (filter) {
      case 'full':
        out.push({ keys: [u.url] });
        break;
      case 'path':
      case 'query': {
        let parsed: URL | undefined;
        try {
          parsed = new URL(u.url);
        } catch {
          parsed = undefined;
        }
        const v = parsed ? (filter === 'path' ? parsed.pathname : parsed.search.replace(/^\?/, '')) : undefined;
        out.push(...one(v));
        break;
      }
      case 'is_phished':
      case 'is_redirected':
      case 'is_obscured':
        if (u.flags.has(filter.slice(3))) out.push({ keys: [u.hostAscii.toLowerCase()] });
        break;
      default:
        if (filter?.startsWith('regexp:') && re) {
          const v = applyRegexp(re, u.url);
          if (v !== undefined) out.push({ keys: [v] });
        } else {
          out.push(...hostCandidate(u.hostAscii || u.host, filter, undefined));
        }
    }
  }
  return out;
}

function filenameCandidates(task: Task, filter: string | undefined, re: RegExp | undefined): Candidate[] {
  const out: Candidate[] = [];
  for (const a of task.message.attachments) {
    if (!a.filename) continue;
    const name = a.filename;
    if (filter === 'extension' || filter === 'ext') {
      const dot = name.lastIndexOf('.');
      if (dot >= 0 && dot < name.length - 1) out.push({ keys: [name.slice(dot + 1).toLowerCase()] });
    } else if (re) {
      const v = applyRegexp(re, name);
      if (v !== undefined) out.push({ keys: [v] });
    } else {
      out.push({ keys: [name] });
    }
  }
  return out;
}

function contentCandidates(task: Task, filter: string | undefined): Candidate[] {
  const m = task.message;
  const cap = (b: Buffer): string => b.subarray(0, MAX_CONTENT_BYTES).toString('utf8');
  switch (filter) {
    case 'body':
      return [{ keys: [cap(m.raw.subarray(m.bodyOffset))] }];
    case 'headers':
      return [{ keys: [cap(m.raw.subarray(0, m.bodyOffset))] }];
    case 'text':
      return m.textParts.map((p) => ({ keys: [p.text.slice(0, MAX_CONTENT_BYTES)] }));
    case 'rawtext':
      return m.textParts.map((p) => ({ keys: [cap(p.part.content)] }));
    case 'oneline':
      return m.textParts.map((p) => ({ keys: [p.text.slice(0, MAX_CONTENT_BYTES).replace(LINE_BREAK_RUN, ' ')] }));
    default:
      return [{ keys: [cap(m.raw)] }];
  }
}

function receivedCandidates(task: Task, rule: MultimapRule, re: RegExp | undefined): Candidate[] {
  const out: Candidate[] = [];
  task.received.forEach((hop, i) => {
    const pos = i + 1;
    if (rule.min_pos !== undefined && pos < rule.min_pos) return;
    if (rule.max_pos !== undefined && pos > rule.max_pos) return;
    switch (rule.filter) {
      case 'from_hostname':
        // Rspamd's from_hostname is the name after `from`; real_hostname the recorded rDNS.
        out.push(...hostCandidate(hop.fromHelo, undefined, re));
        break;
      case 'real_hostname':
        out.push(...hostCandidate(hop.fromHostname, undefined, re));
        break;
      case 'by_hostname':
        out.push(...hostCandidate(hop.by, undefined, re));
        break;
      default:
        out.push(...one(hop.fromIp));
    }
  });
  return out;
}

/** Values a rule looks up for this task, in the order Rspamd tries them. */
export function candidates(task: Task, rule: MultimapRule): Candidate[] {
  const re = regexpFilter(rule.filter);
  switch (rule.type) {
    case 'ip':
      return one(task.meta.ip);
    case 'received':
      return receivedCandidates(task, rule, re);
    case 'from':
      return addressCandidates(fromAddresses(task, rule), rule.filter, re);
    case 'rcpt':
      return addressCandidates(rcptAddresses(task, rule), rule.filter, re);
    case 'header': {
      const names = rule.header === undefined ? [] : typeof rule.header === 'string' ? [rule.header] : rule.header;
      const values = names.flatMap((n) => task.message.headers.get(n).map((h) => h.value));
      if (rule.filter?.startsWith('email')) return addressCandidates(addressesFromHeaders(values), rule.filter, re);
      if (re) return values.flatMap((v) => one(applyRegexp(re, v)));
      return values.flatMap(one);
    }
    case 'helo':
      return hostCandidate(task.meta.helo, rule.filter, re);
    case 'hostname':
      return hostCandidate(task.meta.hostname, rule.filter, re);
    case 'url':
      return urlCandidates(task, rule.filter, re);
    case 'user':
      return one(task.meta.user);
    case 'filename':
      return filenameCandidates(task, rule.filter, re);
    case 'content':
      return contentCandidates(task, rule.filter);
    case 'selector':
      return []; // compiled at load: index.ts reads it (selectorCandidates)
  }
}

/** Each value a selector rule yields is one key (a list of values: each looked up). */
export function selectorCandidates(task: Task, selector: CompiledSelector, delimiter: string): Candidate[] {
  const v = selector.combine(task, delimiter);
  if (v === undefined) return [];
  return (typeof v === 'string' ? [v] : v).flatMap(one);
}
