// Header metatokens (a mailsift extension of Rspamd's metatokens): facts about where a message
// comes from and how it was composed, read from the header block. Rspamd's own metatokens name
// only a few mailer headers; the sender's domains, the relays that carried the mail, the set of
// header names present and the list headers separate a site's ham from spam far better than
// the body words of a short message. Every token is a unigram flagged META.
import { getDomain } from 'tldts';
import type { Message } from '../../message/types.js';
import { parseReceived } from '../../message/parse-received.js';

/** Received headers read at most: the first hops are the ones this site's relays wrote or saw. */
const MAX_RECEIVED_HOPS = 6;
/** Distinct header names turned into `#hn:` tokens at most: a header-stuffed spam must not outvote the text. */
const MAX_HEADER_NAMES = 40;
/** Longer header values are cut: list ids and mailer names are short, anything longer is noise. */
const MAX_VALUE_LENGTH = 60;

/**
 * Headers a scanner or the recipient's own filters add after delivery: their presence says
 * which filter saw the mail, not what the mail is, so they never become tokens.
 */
const SCANNER_HEADER = /^x-(?:spam|virus|rspamd|mailsift|amavis|bogosity|dspam)/;

/** List headers whose value identifies the list: `#l:` tokens. */
const LIST_HEADERS = ['List-Id', 'X-Mailing-List', 'Mailing-List', 'List-Post', 'Precedence', 'X-Beenthere'] as const;

/** The registrable domain of a host name (or the host itself when there is none). */
function domainOf(host: string | undefined): string | undefined {
  if (!host) return undefined;
  const h = host.toLowerCase().replace(/\.$/, '');
  if (!h.includes('.')) return undefined;
  return getDomain(h) ?? h;
}

/** A literal IPv4 address reduced to its /16: relays of one provider share it, single hosts vary. */
function ipPrefix(ip: string | undefined): string | undefined {
  if (!ip) return undefined;
  const m = /^(\d{1,3})\.(\d{1,3})\./.exec(ip);
  return m ? `${m[1]}.${m[2]}` : undefined;
}

function shortValue(v: string): string {
  const s = v.trim().toLowerCase().replace(/\s+/g, ' ');
  return s.length > MAX_VALUE_LENGTH ? s.slice(0, MAX_VALUE_LENGTH) : s;
}

/** Appends the header metatokens of `msg` to `out`. */
export function headerTokens(msg: Message, out: string[]): void {
  const names = new Set<string>();
  for (const h of msg.headers.all) {
    const n = h.name.toLowerCase();
    if (SCANNER_HEADER.test(n) || names.has(n)) continue;
    names.add(n);
    if (names.size <= MAX_HEADER_NAMES) out.push(`#hn:${n}`);
  }

  const from = msg.from[0];
  if (from?.domain) out.push(`#fd:${domainOf(from.domain) ?? from.domain.toLowerCase()}`);
  const reply = msg.replyTo[0];
  if (reply?.domain) {
    const rd = domainOf(reply.domain) ?? reply.domain.toLowerCase();
    out.push(`#rd:${rd}`);
    // Replies sent elsewhere than the sender's domain: common in spam, rare in personal ham.
    if (from?.domain && rd !== (domainOf(from.domain) ?? from.domain.toLowerCase())) out.push('#rd:differs');
  }
  const to = msg.to[0];
  if (to?.domain) out.push(`#td:${domainOf(to.domain) ?? to.domain.toLowerCase()}`);
  if (msg.to.length + msg.cc.length > 1) out.push(`#rc:${Math.min(10, msg.to.length + msg.cc.length)}`);
  if (msg.messageId) {
    const at = msg.messageId.lastIndexOf('@');
    const md = at >= 0 ? domainOf(msg.messageId.slice(at + 1)) : undefined;
    out.push(md ? `#md:${md}` : '#md:none');
  } else {
    out.push('#md:missing');
  }

  for (const name of LIST_HEADERS) {
    const h = msg.headers.first(name);
    if (h) out.push(`#l:${name.toLowerCase()}:${shortValue(h.value)}`);
  }
  const cte = msg.root.transferEncoding;
  if (cte) out.push(`#cte:${cte.toLowerCase()}`);
  const charset = msg.root.contentType.params['charset'];
  if (charset) out.push(`#ch:${charset.toLowerCase()}`);

  const received = msg.headers.get('Received');
  out.push(`#rn:${Math.min(received.length, 10)}`);
  for (let i = 0; i < received.length && i < MAX_RECEIVED_HOPS; i++) {
    const hop = parseReceived(received[i]!.value);
    const fromHost = domainOf(hop.fromHostname) ?? domainOf(hop.fromHelo);
    if (fromHost) out.push(`#rf:${fromHost}`);
    const by = domainOf(hop.by);
    if (by) out.push(`#rb:${by}`);
    const ip = ipPrefix(hop.fromIp);
    if (ip) out.push(`#ri:${ip}`);
    if (hop.protocol) out.push(`#rp:${hop.protocol}`);
  }
}
