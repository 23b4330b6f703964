// Shared pieces for the authentication-module tests: keys generated per run, DKIM records for
// them, messages signed with mailauth, and an engine with the auth modules on the loopback DNS.

import { generateKeyPairSync } from 'node:crypto';
import { dkimSign } from 'mailauth/lib/dkim/sign.js';
import { createEngine } from '../../src/engine/index.js';
import type { Engine } from '../../src/engine/index.js';
import type { EngineConfig } from '../../src/engine/contract.js';
import type { ModuleDefinition, ScanResult } from '../../src/plugin-api/index.js';
import { createNetServices } from '../../src/net/index.js';
import type { NetServices } from '../../src/net/index.js';
import { spfModule } from '../../src/modules/spf/index.js';
import { dkimModule } from '../../src/modules/dkim/index.js';
import { dmarcModule } from '../../src/modules/dmarc/index.js';
import { arcModule } from '../../src/modules/arc/index.js';
import { baseConfig } from '../engine/helpers.js';

export { meta } from '../engine/helpers.js';

export interface TestKey { privatePem: string; record: string }

export function rsaKey(bits = 1024): TestKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: bits });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  return { privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), record: `v=DKIM1; k=rsa; p=${spki.toString('base64')}` };
}

export function ed25519Key(): TestKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  // RFC 8463 §4.2: the record holds the raw 32-byte key, not the SPKI wrapping.
  const raw = publicKey.export({ type: 'spki', format: 'der' }).subarray(-32);
  return { privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), record: `v=DKIM1; k=ed25519; p=${raw.toString('base64')}` };
}

export function message(from: string, extraHeaders = '', body = 'Hello there,\r\nthis is a test message.\r\n'): Buffer {
  return Buffer.from(
    `From: Sender <${from}>\r\nTo: rcpt@example.net\r\nSubject: auth test\r\nDate: Sun, 22 Nov 2026 03:00:00 +0000\r\nMessage-ID: <t${Math.random().toString(36).slice(2)}@example.org>\r\n${extraHeaders}\r\n${body}`,
  );
}

export async function sign(msg: Buffer, domain: string, selector: string, key: TestKey, algorithm?: string): Promise<Buffer> {
  const data = { signingDomain: domain, selector, privateKey: key.privatePem, canonicalization: 'relaxed/relaxed', ...(algorithm ? { algorithm } : {}) };
  const r = await dkimSign(msg, { ...data, signatureData: [data] });
  if (r.errors.length) throw r.errors[0];
  if (!r.signatures.startsWith('DKIM-Signature')) throw new Error('mailauth produced no signature');
  return Buffer.concat([Buffer.from(r.signatures), msg]);
}

export interface AuthEngine { engine: Engine; net: NetServices }

export const AUTH_MODULES: ModuleDefinition<any>[] = [spfModule, dkimModule, dmarcModule, arcModule]; // eslint-disable-line @typescript-eslint/no-explicit-any -- heterogeneous module configs

export async function authEngine(dnsAddress: string, over: Partial<EngineConfig> = {}, modules: ModuleDefinition<any>[] = AUTH_MODULES): Promise<AuthEngine> { // eslint-disable-line @typescript-eslint/no-explicit-any -- heterogeneous module configs
  const net = createNetServices({ dns: { servers: [dnsAddress], timeout: 0.3, retransmits: 1 } });
  const engine = await createEngine(baseConfig(over), modules, { net });
  return { engine, net };
}

/** Symbol name → options, for compact assertions. */
export function symbolMap(r: ScanResult): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const s of r.symbols) out[s.name] = s.options ?? [];
  return out;
}

export function names(r: ScanResult, prefix: RegExp): string[] {
  return r.symbols.map((s) => s.name).filter((n) => prefix.test(n)).sort();
}
