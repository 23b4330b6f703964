// ARC sealing (RFC 8617 §5.1): a forwarder adds its ARC set — ARC-Authentication-Results with
// what this scan verified, ARC-Message-Signature and ARC-Seal — as milter header additions.
// Sealed only when the incoming chain is absent or valid, like mailauth and Rspamd.

import { loadArc } from '../../module-helpers/mailauth-libs.js';
import type { Task } from '../../plugin-api/index.js';
import { signingInput } from '../../module-helpers/auth-message.js';
import { authOutcome, authResultRows } from '../../module-helpers/auth-results.js';

export interface SealIdentity { domain: string; selector: string; privateKey: string }

/** Milter position of the ARC set: on top, as a new hop's headers go (RFC 8617 §4.1). */
const ARC_HEADER_ORDER = 1;

export function makeArcSeal(id: SealIdentity, authservId: string): (task: Task) => Promise<void> {
  return async (task) => {
    if (task.meta.raw || task.raw.length === 0) return;
    const chain = authOutcome(task, 'arc')?.result ?? 'none';
    // A failed chain is not extended (RFC 8617 §5.1.2 lets the sealer stop; cv=fail seals are rarely useful).
    if (chain !== 'none' && chain !== 'pass') return;
    const rows = authResultRows(task);
    const authResults = `${authservId}; ${rows.length > 0 ? rows.join('; ') : 'none'}`;
    const { createSeal } = await loadArc();
    const { headers } = await createSeal(signingInput(task), {
      seal: { signingDomain: id.domain, selector: id.selector, privateKey: id.privateKey, authResults, cv: chain },
    } as never);
    const nl = task.foldNewline;
    let instance = '';
    for (const h of headers) {
      const at = h.indexOf(':');
      if (at < 0) continue;
      const name = h.slice(0, at);
      const value = h.slice(at + 1).trim().replace(/\r\n[ \t]+/g, `${nl}\t`);
      if (name === 'ARC-Seal') instance = /\bi=(\d+)/.exec(value)?.[1] ?? '';
      task.addMilterHeader(name, value, ARC_HEADER_ORDER);
    }
    task.insert('ARC_SIGNED', 1, `${id.domain}:s=${id.selector}:i=${instance}`);
  };
}
