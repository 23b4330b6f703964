// The hfilter callback: HELO, client host name, envelope sender, recipients, Message-ID and
// link-only bodies judged for plausibility (Rspamd's hfilter.lua).
import type { DnsResult, Task, TextPart } from '../../plugin-api/index.js';
import { isLocalAddress } from '../../module-helpers/local-address.js';
import { memoize } from '../../message/memo.js';
import type { HfilterConfig } from './config.js';
import { HELO_BAD_IP, HELO_BARE_IP, HELO_PATTERNS, HOST_PATTERNS, isFqdn, maxWeight } from './patterns.js';
import { urlOnlyRatio } from './url-only.js';

/** The HELO rspamc sends by default: not the client's. */
const RSPAMC_HELO = 'rspamc.local';
/** Link-only share of a part's text above which HFILTER_URL_ONLY starts to count. */
const URL_ONLY_FROM = 0.8;

type Suffix = 'HELO' | 'FROMHOST' | 'MID';

// The pattern weights of a HELO and of a client name, remembered: a few relays say most of the
// HELOs a server sees (367 distinct among the 2 481 the development split's MTA recorded), and
// each look runs some 30 regular expressions.
const heloWeight = memoize((helo: string) => Math.max(maxWeight(helo, HELO_PATTERNS), maxWeight(helo, HOST_PATTERNS)));
const hostnameWeight = memoize((hostname: string) => maxWeight(hostname, HOST_PATTERNS));

/** A/AAAA of `host`, then its MX and their addresses, as Rspamd's check_host does. */
async function checkHost(task: Task, host: string, suffix: Suffix, dns: boolean, ip?: string): Promise<void> {
  const name = host.toLowerCase();
  if (!isFqdn(name)) {
    task.insert(`HFILTER_${suffix}_NOT_FQDN`, 1, name);
    return;
  }
  if (!dns) return;
  const [a, aaaa] = await Promise.all([task.dns.a(name), task.dns.aaaa(name)]);
  if (a.ok || aaaa.ok) return;
  // A lookup that failed (time-out, unreachable or failing resolver) says nothing about the
  // host: only "no such name" / "no records" answers may count against the message.
  if (!noAddress(task, name, a, aaaa)) return;
  // Neither A nor AAAA: the HELO cannot be the connecting address.
  if (ip) task.insert(`HFILTER_${suffix}_IP_A`, 1, name);
  const mx = await task.dns.mx(name);
  if (!mx.ok && !negative(mx)) {
    unknown(task, name, mx);
    return;
  }
  if (!mx.ok || mx.results.length === 0) {
    task.insert(`HFILTER_${suffix}_NORES_A_OR_MX`, 1, name);
    return;
  }
  await Promise.all(
    mx.results.map(async (r) => {
      const mxName = typeof r === 'object' && 'name' in r ? r.name : undefined;
      if (!mxName) return;
      const [ma, maaaa] = await Promise.all([task.dns.a(mxName), task.dns.aaaa(mxName)]);
      if (!ma.ok && !maaaa.ok && noAddress(task, mxName, ma, maaaa)) task.insert(`HFILTER_${suffix}_NORESOLVE_MX`, 1, mxName);
    }),
  );
}

/** A DNS answer that the name has no such records (as opposed to a failed lookup). */
function negative(r: DnsResult): boolean {
  return !r.ok && (r.code === 'NXDOMAIN' || r.code === 'NODATA');
}

/** Both address lookups answered that there is no address; a failure of either is logged. */
function noAddress(task: Task, name: string, a: DnsResult, aaaa: DnsResult): boolean {
  if (negative(a) && negative(aaaa)) return true;
  unknown(task, name, negative(a) ? aaaa : a);
  return false;
}

function unknown(task: Task, name: string, r: DnsResult): void {
  task.log.debug('hfilter: DNS lookup failed; host not judged', { name, error: r.ok ? undefined : r.error });
}

function checkUrlOnly(task: Task): void {
  const parts = task.message.textParts;
  let html: TextPart | undefined;
  let plain: TextPart | undefined;
  for (const p of parts) {
    if (p.kind === 'html') html = p;
    else plain = p;
  }
  const part = html ?? plain;
  if (!part) return;
  const rel = urlOnlyRatio(part);
  if (rel <= URL_ONLY_FROM) return;
  const sc = Math.min(1, (rel - URL_ONLY_FROM) * 5);
  task.insert('HFILTER_URL_ONLY', sc, String(Math.round(sc * 100) / 100));
  if (part.lines === 1) task.insert('HFILTER_URL_ONELINE', 1, `${part.kind}:${part.lines}`);
}

export function makeHfilterCheck(cfg: HfilterConfig): (task: Task) => Promise<void> {
  return async (task) => {
    if (cfg.url_enabled && !task.meta.raw) checkUrlOnly(task);
    const ip = task.meta.ip;
    if ((!cfg.check_authed && task.meta.user) || (!cfg.check_local && isLocalAddress(ip))) return;
    const lookups: Array<Promise<void>> = [];

    let weightHelo = 0;
    let helo = task.meta.helo;
    if (cfg.helo_enabled && helo && helo !== RSPAMC_HELO) {
      helo = helo.replace(/[[\]]/g, '');
      const badIp = HELO_BAD_IP.find((re) => re.test(helo!));
      const bareIp = badIp ? undefined : HELO_BARE_IP.find((re) => re.test(helo!));
      if (badIp) task.insert('HFILTER_HELO_BADIP', 1, `${helo}:${String(badIp)}`);
      else if (bareIp) task.insert('HFILTER_HELO_BAREIP', 1, `${helo}:${String(bareIp)}`);
      else {
        weightHelo = heloWeight(helo);
        if (ip && weightHelo === 0) lookups.push(checkHost(task, helo, 'HELO', cfg.dns_enabled, ip));
      }
    }

    let weightHostname = 0;
    const hostname = task.meta.hostname;
    if (cfg.hostname_enabled) {
      // Rspamd reports an absent client name the same as the MTA's `unknown`.
      if (!hostname || hostname.toLowerCase() === 'unknown') task.insert('HFILTER_HOSTNAME_UNKNOWN', 1);
      else weightHostname = hostnameWeight(hostname);
    }
    if (weightHelo > 0 && weightHelo >= weightHostname) task.insert(`HFILTER_HELO_${weightHelo}`, 1, helo);
    else if (weightHostname > 0) task.insert(`HFILTER_HOSTNAME_${weightHostname}`, 1, hostname);

    let bounce = false;
    if (cfg.from_enabled) {
      const from = task.envelopeFrom;
      if (from) {
        if (from.local && from.domain) {
          lookups.push(checkHost(task, from.domain, 'FROMHOST', cfg.dns_enabled));
          if (from.local.toLowerCase() === 'postmaster') bounce = true;
        }
      } else if (helo && helo !== RSPAMC_HELO) {
        task.insert('HFILTER_FROM_BOUNCE', 1, helo);
        bounce = true;
      }
    }
    if (cfg.rcpt_enabled && bounce && task.envelopeRcpt.length > 1) {
      task.insert('HFILTER_RCPT_BOUNCEMOREONE', 1, String(task.envelopeRcpt.length));
    }

    const mid = task.message.messageId;
    if (cfg.mid_enabled && mid) {
      const at = mid.split('@');
      if (at.length === 2 && at[1] && !at[1].includes('local')) lookups.push(checkHost(task, at[1], 'MID', cfg.dns_enabled));
    }
    await Promise.all(lookups);
  };
}
