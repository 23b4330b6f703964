// DMARC record grammar (RFC 7489 §6.3) and alignment: pure functions, no I/O.

import { getDomain } from 'tldts';

export type DmarcPolicy = 'none' | 'quarantine' | 'reject';

export interface DmarcRecord {
  p: DmarcPolicy;
  /** Policy for subdomains; `p` when absent. */
  sp: DmarcPolicy;
  /** Percentage of failing mail the policy applies to (0–100). */
  pct: number;
  adkim: 'r' | 's';
  aspf: 'r' | 's';
  raw: string;
}

export type ParsedRecord = { ok: true; record: DmarcRecord } | { ok: false; reason: string };

const POLICIES = new Set(['none', 'quarantine', 'reject']);

/** Whether a TXT string is a DMARC record at all (other TXT records at _dmarc are ignored). */
export function isDmarcRecord(txt: string): boolean {
  return /^v\s*=\s*DMARC1\s*(;|$)/i.test(txt.trim());
}

export function parseDmarcRecord(txt: string): ParsedRecord {
  const tags = new Map<string, string>();
  for (const part of txt.split(';')) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    tags.set(part.slice(0, at).trim().toLowerCase(), part.slice(at + 1).trim());
  }
  const p = tags.get('p')?.toLowerCase();
  if (!p || !POLICIES.has(p)) return { ok: false, reason: p ? `unknown policy ${p}` : 'no policy' };
  const spRaw = tags.get('sp')?.toLowerCase();
  const sp = spRaw && POLICIES.has(spRaw) ? spRaw : p;
  const pctRaw = tags.get('pct');
  let pct = 100;
  if (pctRaw !== undefined) {
    if (!/^\d{1,3}$/.test(pctRaw) || Number(pctRaw) > 100) return { ok: false, reason: `bad pct ${pctRaw}` };
    pct = Number(pctRaw);
  }
  return {
    ok: true,
    record: {
      p: p as DmarcPolicy,
      sp: sp as DmarcPolicy,
      pct,
      adkim: tags.get('adkim')?.toLowerCase() === 's' ? 's' : 'r',
      aspf: tags.get('aspf')?.toLowerCase() === 's' ? 's' : 'r',
      raw: txt,
    },
  };
}

/** The organisational domain (registrable domain by the Public Suffix List). */
export function orgDomain(domain: string): string {
  return getDomain(domain, { allowPrivateDomains: true }) ?? domain;
}

export function aligned(fromDomain: string, authDomain: string, mode: 'r' | 's'): boolean {
  const a = fromDomain.toLowerCase();
  const b = authDomain.toLowerCase();
  if (mode === 's') return a === b;
  return orgDomain(a) === orgDomain(b);
}
