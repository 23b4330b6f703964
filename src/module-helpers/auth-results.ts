// Results of the authentication checks as data, kept in the task cache so later checks (DMARC
// reads SPF and DKIM, ARC reads the DKIM pass) and milter_headers (Authentication-Results) use
// them without recomputing. Shared by spf, dkim, dmarc, arc, whitelist and milter-headers.

import type { Task } from '../plugin-api/index.js';
import { isLocalAddress } from './local-address.js';

export type AuthResultValue = 'pass' | 'fail' | 'softfail' | 'neutral' | 'none' | 'temperror' | 'permerror' | 'policy';

export interface SpfOutcome {
  result: AuthResultValue;
  /** mailauth's explanation (`host: domain of … designates …`), Rspamd's wording too. */
  comment?: string;
  /** The domain checked (MAIL FROM, or HELO for the null sender). */
  domain: string;
  /** mailauth's Authentication-Results row, e.g. `spf=pass smtp.mailfrom=…`. */
  info: string;
}

export interface DkimSignatureOutcome {
  result: AuthResultValue;
  domain: string;
  selector: string;
  info: string;
  /** Key length below the minimum (counted as failure for DMARC). */
  underSized?: boolean;
}

export interface DkimOutcome {
  signatures: DkimSignatureOutcome[];
  /** From header addresses mailauth found. */
  headerFrom: string[];
  /** ARC data from the same parse (mailauth's `arc` field), for the arc module. */
  arc: unknown;
}

export interface DmarcOutcome { result: AuthResultValue; domain: string; policy?: string; info: string; /** DNS error text for temperror. */ reason?: string }
export interface ArcOutcome { result: AuthResultValue; info: string }

export const AUTH_CACHE = {
  spf: 'auth:spf',
  dkim: 'auth:dkim',
  dmarc: 'auth:dmarc',
  arc: 'auth:arc',
} as const;

export function authOutcome<K extends keyof typeof AUTH_CACHE>(task: Task, kind: K): (K extends 'spf' ? SpfOutcome : K extends 'dkim' ? DkimOutcome : K extends 'dmarc' ? DmarcOutcome : ArcOutcome) | undefined {
  return task.cache.get(AUTH_CACHE[kind]) as never;
}

export interface SkipOptions { check_local: boolean; check_authed: boolean }

/** Rspamd's policy checks skip mail from local addresses and authenticated users unless asked. */
export function skipAuth(task: Task, opts: SkipOptions): string | undefined {
  if (!opts.check_authed && task.meta.user) return 'authenticated';
  if (!opts.check_local && task.meta.ip && isLocalAddress(task.meta.ip)) return 'local';
  return undefined;
}

/** Records whether any lookup of a check failed temporarily (time-out, server failure). */
export interface TrackedResolver {
  (name: string, rrtype: string): Promise<unknown[]>;
  tempfail: boolean;
}

/**
 * node:dns codes (as task.dns.nodeResolver throws them) of a lookup that failed rather than
 * answered: time-out, server failure or refusal, a malformed or unsupported query, an unreachable
 * resolver (ECONNREFUSED is how a network error is spelt), the task ending.
 */
const TEMP_CODES = new Set(['ETIMEOUT', 'ESERVFAIL', 'EREFUSED', 'EFORMERR', 'ENOTIMP', 'ECONNREFUSED', 'ECANCELLED']);

export function trackedResolver(task: Task): TrackedResolver {
  const base = task.dns.nodeResolver;
  const f = (async (name: string, rrtype: string) => {
    try {
      return await base(name, rrtype);
    } catch (e) {
      if (TEMP_CODES.has((e as { code?: string }).code ?? '')) f.tempfail = true;
      throw e;
    }
  }) as TrackedResolver;
  f.tempfail = false;
  return f;
}

const DKIM_AR: Partial<Record<AuthResultValue, string>> = { pass: 'pass', fail: 'fail', temperror: 'temperror' };

/**
 * Authentication-Results method results (RFC 8601) from the checks that ran, in Rspamd 3.4's
 * order and wording (as its recorded replies show): dkim (one per signature, or `none`), spf, dmarc, then arc
 * when a chain was present. Empty when no check ran.
 */
export function authResultRows(task: Task): string[] {
  const rows: string[] = [];
  const dkim = authOutcome(task, 'dkim');
  if (dkim && dkim.signatures.length === 0) rows.push('dkim=none');
  for (const s of dkim?.signatures ?? []) {
    // A body-hash mismatch (mailauth: neutral) is a failed signature for the header too.
    const r = DKIM_AR[s.result] ?? (/body hash/.test(s.info) ? 'fail' : 'permerror');
    rows.push(`dkim=${r} header.d=${s.domain} header.s=${s.selector}`);
  }
  const spf = authOutcome(task, 'spf');
  if (spf) {
    const from = task.envelopeFrom?.address;
    const comment = spf.comment ? ` (${spf.comment})` : '';
    rows.push(`spf=${spf.result}${comment} ${from ? `smtp.mailfrom=${from}` : `smtp.helo=${task.meta.helo ?? spf.domain}`}`);
  }
  const dmarc = authOutcome(task, 'dmarc');
  if (dmarc) {
    const reason = dmarc.reason ? ` reason="${dmarc.reason}"` : '';
    rows.push(`dmarc=${dmarc.result}${reason} header.from=${dmarc.domain}${dmarc.policy ? ` (policy=${dmarc.policy})` : ''}`);
  }
  const arc = authOutcome(task, 'arc');
  if (arc && arc.result !== 'none') rows.push(`arc=${arc.result}`);
  return rows;
}
