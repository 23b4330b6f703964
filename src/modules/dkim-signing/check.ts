import { createPrivateKey } from 'node:crypto';
import { loadDkimSign } from '../../module-helpers/mailauth-libs.js';
import { getDomain } from 'tldts';
import type { Task } from '../../plugin-api/index.js';
import { signingInput } from '../../module-helpers/auth-message.js';
import { isLocalAddress } from '../../module-helpers/local-address.js';
import type { DkimSigningConfig } from './config.js';
import type { KeyStore } from './keys.js';

function shouldSign(task: Task, cfg: DkimSigningConfig): boolean {
  if (task.meta.user) return cfg.sign_authenticated;
  if (task.meta.ip && isLocalAddress(task.meta.ip)) return cfg.sign_local;
  return cfg.sign_inbound;
}

function signingDomain(task: Task, cfg: DkimSigningConfig): string | undefined {
  let domain: string | undefined;
  if (cfg.use_domain === 'envelope') domain = task.envelopeFrom?.domain;
  else {
    const from = task.message.from;
    if (from.length !== 1) return undefined;
    const addr = from[0]!.address;
    domain = addr.includes('@') ? addr.slice(addr.lastIndexOf('@') + 1) : undefined;
  }
  if (!domain) return undefined;
  domain = domain.toLowerCase();
  return cfg.use_esld ? getDomain(domain, { allowPrivateDomains: true }) ?? domain : domain;
}

export function makeSigningCheck(cfg: DkimSigningConfig, keys: KeyStore): (task: Task) => Promise<void> {
  return async (task) => {
    if (task.meta.raw || task.raw.length === 0 || !shouldSign(task, cfg)) return;
    const domain = signingDomain(task, cfg);
    if (!domain) return;
    const key = await keys.lookup(domain);
    if (!key) return;
    const algorithm = createPrivateKey(key.privateKey).asymmetricKeyType === 'ed25519' ? 'ed25519-sha256' : 'rsa-sha256';
    const data = {
      signingDomain: domain,
      selector: key.selector,
      privateKey: key.privateKey,
      algorithm,
      canonicalization: cfg.canonicalization,
      ...(cfg.sign_headers.length > 0 ? { headerList: cfg.sign_headers } : {}),
    };
    // mailauth reads the header block it is given in full: it gets the capped one (signingInput).
    const { dkimSign } = await loadDkimSign();
    const r = await dkimSign(signingInput(task), { ...data, signatureData: [data] });
    if (r.errors.length > 0 || !r.signatures.startsWith('DKIM-Signature:')) {
      task.log.warn('DKIM signing failed', { domain, error: r.errors[0]?.message });
      return;
    }
    // Rspamd folds the value with the message's newline (LF for milter) and a tab (as recorded);
    // the reply carries it as `dkim-signature`, and the MTA or milter proxy adds the header.
    const nl = task.foldNewline;
    const value = r.signatures.replace(/\r\n$/, '').slice('DKIM-Signature:'.length).trim().replace(/\r\n[ \t]+/g, `${nl}\t`);
    task.addDkimSignature(value);
    if (cfg.rewrite_message) task.rewriteMessage(Buffer.concat([Buffer.from(`DKIM-Signature: ${value}${nl}`), task.raw]));
    task.insert('DKIM_SIGNED', 1, `${domain}:s=${key.selector}`);
  };
}
