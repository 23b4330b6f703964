import type { Task } from '../../plugin-api/index.js';
import { AUTH_CACHE, authOutcome, skipAuth } from '../../module-helpers/auth-results.js';
import type { AuthResultValue, DmarcOutcome } from '../../module-helpers/auth-results.js';
import type { DmarcConfig } from './config.js';
import { aligned, isDmarcRecord, orgDomain, parseDmarcRecord } from './record.js';
import type { DmarcRecord } from './record.js';

type Lookup = { kind: 'record'; record: DmarcRecord; domain: string } | { kind: 'none' } | { kind: 'bad'; reason: string; domain: string } | { kind: 'dnsfail'; error: string };

async function fetchRecord(task: Task, domain: string): Promise<Lookup | undefined> {
  const r = await task.dns.txt(`_dmarc.${domain}`);
  if (!r.ok) return r.code === 'NXDOMAIN' || r.code === 'NODATA' ? undefined : { kind: 'dnsfail', error: r.error };
  const records = r.results.map(String).filter(isDmarcRecord);
  // RFC 7489 §6.6.3: more than one record means no policy.
  if (records.length !== 1) return undefined;
  const parsed = parseDmarcRecord(records[0]!);
  return parsed.ok ? { kind: 'record', record: parsed.record, domain } : { kind: 'bad', reason: parsed.reason, domain };
}

/**
 * The From domain's record, else the organisational domain's (RFC 7489 §6.6.3). Both are asked
 * at once: most mail comes from a subdomain without a record of its own, and asking the second
 * only after the first answered would cost every such message another DNS round trip.
 */
async function lookupPolicy(task: Task, fromDomain: string): Promise<Lookup> {
  const org = orgDomain(fromDomain);
  const orgRecord = org !== fromDomain ? fetchRecord(task, org) : undefined;
  const own = await fetchRecord(task, fromDomain);
  if (own) return own;
  return (orgRecord && (await orgRecord)) ?? { kind: 'none' };
}

/** Task cache key of the policy lookup started by DMARC_POLICY_LOOKUP. */
const LOOKUP_KEY = 'dmarc:policy-lookup';

/**
 * DMARC_POLICY_LOOKUP (a prefilter): asks for the policy before the filters start. The record
 * does not depend on the SPF and DKIM results DMARC_CHECK waits for, so looking it up alongside
 * their own lookups saves a DNS round trip per message; DMARC_CHECK takes the answer from here.
 */
export function makeDmarcLookup(config: DmarcConfig): (task: Task) => void {
  return (task) => {
    if (task.meta.raw || skipAuth(task, config)) return;
    const fromDomain = fromDomainOf(task);
    if (!fromDomain) return;
    const lookup = lookupPolicy(task, fromDomain);
    // Handled where DMARC_CHECK awaits it; this keeps an unawaited failure from being unhandled.
    lookup.catch(() => undefined);
    task.cache.set(LOOKUP_KEY, lookup);
  };
}

function fromDomainOf(task: Task): string | undefined {
  const from = task.message.from;
  // DMARC needs exactly one author address (RFC 7489 §6.6.1).
  if (from.length !== 1) return undefined;
  const addr = from[0]!.address;
  const at = addr.lastIndexOf('@');
  return at > 0 ? addr.slice(at + 1).toLowerCase() : undefined;
}

export function makeDmarcCheck(config: DmarcConfig, random: () => number = Math.random): (task: Task) => Promise<void> {
  return async (task) => {
    if (task.meta.raw || skipAuth(task, config)) return;
    const fromDomain = fromDomainOf(task);
    if (!fromDomain) return;
    // Settings may run DMARC_CHECK without DMARC_POLICY_LOOKUP: then it looks up the policy itself.
    const policy = await ((task.cache.get(LOOKUP_KEY) as Promise<Lookup> | undefined) ?? lookupPolicy(task, fromDomain));
    const save = (result: AuthResultValue, pol?: string, reason?: string): void => {
      const o: DmarcOutcome = { result, domain: fromDomain, info: `dmarc=${result} header.from=${fromDomain}${pol ? ` policy.dmarc=${pol}` : ''}` };
      if (pol) o.policy = pol;
      if (reason) o.reason = reason;
      task.cache.set(AUTH_CACHE.dmarc, o);
    };
    if (policy.kind === 'dnsfail') { task.insert('DMARC_DNSFAIL', 1, fromDomain); save('temperror', 'temperror', policy.error); return; }
    if (policy.kind === 'none') { task.insert('DMARC_NA', 1, fromDomain); save('none'); return; }
    if (policy.kind === 'bad') { task.insert('DMARC_BAD_POLICY', 1, `${policy.domain} : ${policy.reason}`); save('permerror'); return; }
    const rec = policy.record;
    const spf = authOutcome(task, 'spf');
    const dkim = authOutcome(task, 'dkim');
    const spfOk = spf?.result === 'pass' && aligned(fromDomain, spf.domain, rec.aspf);
    const dkimOk = (dkim?.signatures ?? []).some((s) => s.result === 'pass' && !s.underSized && aligned(fromDomain, s.domain, rec.adkim));
    // A subdomain without its own record gets the organisational record's `sp`.
    const effective = policy.domain !== fromDomain ? rec.sp : rec.p;
    if (spfOk || dkimOk) {
      const failures = (spf !== undefined && spf.result !== 'pass') || (dkim?.signatures ?? []).some((s) => s.result !== 'pass');
      task.insert(failures ? 'DMARC_POLICY_ALLOW_WITH_FAILURES' : 'DMARC_POLICY_ALLOW', 1, [policy.domain, effective]);
      save('pass', effective);
      return;
    }
    save('fail', effective);
    if (effective === 'none') { task.insert('DMARC_POLICY_SOFTFAIL', 1, [policy.domain, 'none']); return; }
    // pct: the policy applies to that share of failing mail; the rest is treated as p=none (Rspamd: sampled_out).
    if (rec.pct < 100 && random() * 100 >= rec.pct) {
      task.insert('DMARC_POLICY_SOFTFAIL', 1, [policy.domain, 'sampled_out']);
      return;
    }
    task.insert(effective === 'reject' ? 'DMARC_POLICY_REJECT' : 'DMARC_POLICY_QUARANTINE', 1, [policy.domain, effective]);
  };
}
