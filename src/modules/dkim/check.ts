import { loadDkimVerify } from '../../module-helpers/mailauth-libs.js';
import type { Task } from '../../plugin-api/index.js';
import { authInput, MAX_DKIM_BODY_HASHES, type AuthInput } from '../../module-helpers/auth-message.js';
import { AUTH_CACHE, skipAuth, trackedResolver } from '../../module-helpers/auth-results.js';
import type { AuthResultValue, DkimOutcome, DkimSignatureOutcome } from '../../module-helpers/auth-results.js';
import type { DkimConfig } from './config.js';

/**
 * Rspamd's reading of a signature result: valid → allow (`+`), bad signature or body hash →
 * reject (`-`), DNS trouble → tempfail (`?`), anything malformed (no key, revoked key, bad
 * tags, weak key) → permfail (`~`).
 */
function classify(s: DkimSignatureOutcome, comment: string): 'R_DKIM_ALLOW' | 'R_DKIM_REJECT' | 'R_DKIM_TEMPFAIL' | 'R_DKIM_PERMFAIL' {
  switch (s.result) {
    case 'pass': return 'R_DKIM_ALLOW';
    case 'temperror': return 'R_DKIM_TEMPFAIL';
    case 'fail': return 'R_DKIM_REJECT';
    // mailauth reports a body-hash mismatch as neutral; for Rspamd it is a rejected signature.
    default: return /body hash/i.test(comment) ? 'R_DKIM_REJECT' : 'R_DKIM_PERMFAIL';
  }
}

const TRACE_MARK = { R_DKIM_ALLOW: '+', R_DKIM_REJECT: '-', R_DKIM_TEMPFAIL: '?', R_DKIM_PERMFAIL: '~' } as const;

export function makeDkimCheck(config: DkimConfig): (task: Task) => Promise<void> {
  return async (task) => {
    if (task.meta.raw || skipAuth(task, config)) return;
    if (!task.message.headers.has('dkim-signature') && !task.message.headers.has('arc-seal')) {
      task.cache.set(AUTH_CACHE.dkim, { signatures: [], headerFrom: [], arc: undefined } satisfies DkimOutcome);
      task.insert('R_DKIM_NA');
      return;
    }
    const input = authInput(task, config.max_sigs);
    if (input.signaturesKept + input.signaturesUnusable.length < input.signatures) reportSkipped(task, input, config.max_sigs);
    const resolver = trackedResolver(task);
    const { dkimVerify } = await loadDkimVerify();
    const r = await dkimVerify(input.raw, { resolver: resolver as never, minBitLength: config.min_key_bits, ...(task.envelopeFrom?.address ? { sender: task.envelopeFrom.address } : {}) });
    const signatures: DkimSignatureOutcome[] = [];
    for (const res of r.results ?? []) {
      if (res.status.result === 'none') continue;
      const s: DkimSignatureOutcome = { result: res.status.result as AuthResultValue, domain: res.signingDomain ?? '', selector: res.selector ?? '', info: res.info };
      if (res.status.underSized) s.underSized = true;
      signatures.push(s);
      const sym = classify(s, String(res.status.comment ?? ''));
      task.insert(sym, 1, `${s.domain}:s=${s.selector}`);
      task.insert('DKIM_TRACE', 1, `${s.domain}:${TRACE_MARK[sym]}`);
    }
    // Signatures whose t= or x= is no time were kept from mailauth (auth-message.ts): each is a
    // signature that cannot verify, a permanent failure, with the reason as an option.
    for (const u of input.signaturesUnusable) {
      signatures.push({ result: 'permerror', domain: u.domain, selector: u.selector, info: `dkim=permerror (${u.reason}) header.d=${u.domain} header.s=${u.selector}` });
      task.insert('R_DKIM_PERMFAIL', 1, [`${u.domain}:s=${u.selector}`, u.reason]);
      task.insert('DKIM_TRACE', 1, `${u.domain}:~`);
    }
    const outcome: DkimOutcome = { signatures, headerFrom: r.headerFrom ?? [], arc: r.arc };
    task.cache.set(AUTH_CACHE.dkim, outcome);
    if (signatures.length === 0) task.insert('R_DKIM_NA');
  };
}

/** Signatures past the caps were not verified: an option on DKIM_SIGS_SKIPPED and a log line say how many. */
function reportSkipped(task: Task, input: AuthInput, maxSigs: number): void {
  const skipped = input.signatures - input.signaturesKept - input.signaturesUnusable.length;
  // Past MAX_HEADERS the header block was not read, so there may be more than were counted.
  const more = input.headersDropped ? '+' : '';
  const otherBody = input.signaturesOtherBody > 0 ? `; ${input.signaturesOtherBody} of a body canonicalization past the first ${MAX_DKIM_BODY_HASHES}` : '';
  const text = `${skipped}${more} signatures not checked (max_sigs ${maxSigs}${otherBody})`;
  task.insert('DKIM_SIGS_SKIPPED', 1, text);
  task.log.info(`dkim: ${text}`, { signatures: input.signatures, checked: input.signaturesKept, maxSigs, headersCut: input.headersDropped });
}
