// The client of a request that named none. Rspamd 3.4, once it has parsed the message of a
// task without an `IP` request header (`rspamc file.eml`, a bench, a misconfigured MTA), takes
// the client address from the top Received header and, when that header records a reverse
// name, the client host name too (libmime/received.cxx, "maybe fix task"). Every rule after it
// sees them as if the MTA had passed them: hfilter, greylisting, reputation, RBL, SPF, settings
// rules on `ip`, the log. mailsift does the same once, here, before settings and rules.
//
// Facts, as read from Rspamd 3.4:
// - only the top hop counts (the first Received header that parses at all); it is not skipped
//   for being local, so a message a local relay handed on gets 127.0.0.1 (and the rules that
//   skip local clients skip it);
// - nothing is taken when that hop records no address;
// - the host name is the hop's reverse name only (Postfix's `(name [ip])`; `unknown` is none),
//   and replaces a `Hostname` the request gave only when there is one;
// - the HELO is never taken; the task keeps its "no IP" flag (here `meta.noIp`): the hop
//   Rspamd adds for a client the top Received does not name is not added.
import type { ScanMeta } from '../core/scan-types.js';
import { parseMessage } from '../message/parse-message.js';
import { parseReceivedChain } from '../message/parse-received.js';
import type { Message, ReceivedHop } from '../message/types.js';

/** The top hop as Rspamd counts it: the first Received header that parsed at all. */
function topHop(hops: readonly ReceivedHop[]): ReceivedHop | undefined {
  return hops.find((h) => !h.unparsed);
}

/**
 * `meta` as the rules see it. A request with an IP is returned as it came. Without one the
 * result has `noIp` set and, when the top hop of `hops()` records an address, `ip` (and
 * `hostname` when it records a reverse name) from it. `hops` is asked only when there is a MIME
 * message to read: not for raw input, an empty body or a request to skip. The request's object
 * is never changed.
 */
export function resolveClient(meta: ScanMeta, message: Buffer, hops: () => readonly ReceivedHop[]): ScanMeta {
  if (meta.ip !== undefined) return meta;
  const fixed: ScanMeta = { ...meta, noIp: true };
  if (meta.raw || message.length === 0 || meta.flags.has('skip')) return fixed;
  const top = topHop(hops());
  if (top?.realIp === undefined) return fixed;
  fixed.ip = top.realIp;
  if (top.realHostname !== undefined) fixed.hostname = top.realHostname;
  return fixed;
}

/**
 * resolveClient on a request's message bytes: the meta the rules see, and the message when it
 * had to be parsed for that (the scan adopts it instead of parsing again).
 */
export function clientFromMessage(meta: ScanMeta, raw: Buffer): { meta: ScanMeta; parsed?: Message } {
  let parsed: Message | undefined;
  const resolved = resolveClient(meta, raw, () => {
    try {
      parsed = parseMessage(raw);
      return parseReceivedChain(parsed.headers.get('received'));
    } catch {
      // A parse that fails fails again in the task, where a failure is contained and answered.
      parsed = undefined;
      return [];
    }
  });
  return parsed ? { meta: resolved, parsed } : { meta: resolved };
}
