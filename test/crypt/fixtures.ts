// The HTTPCrypt golden captures from real rspamd/rspamc 3.4 (shared/fixtures/httpcrypt/).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseKeypair, type KexKeypair } from '../../src/crypto/keypair.js';

export const DIR = '/work/shared/fixtures/httpcrypt';

export interface CryptCase {
  name: string;
  dir: string;
  port: number;
  encrypted: boolean;
  client_sk_hex?: string;
  client_pk_hex?: string;
  nm_hex?: string;
  key_header?: string;
  request_nonce_hex?: string;
  response_nonce_hex?: string;
  request_mac_hex?: string;
  response_mac_hex?: string;
  peer_keypair?: string;
  expect_request_decrypt?: boolean;
  expect_response_decrypt?: boolean;
  response_empty?: boolean;
  server_without_keypair?: boolean;
  mac_tampered?: boolean;
  inner_parse_error?: boolean;
}

export const cases: CryptCase[] = (JSON.parse(readFileSync(join(DIR, 'cases.json'), 'utf8')) as { cases: CryptCase[] }).cases;

export function file(c: CryptCase, name: string): Buffer | undefined {
  const p = join(DIR, c.dir, name);
  return existsSync(p) ? readFileSync(p) : undefined;
}

export function loadKeypair(name: string): KexKeypair {
  const r = parseKeypair(JSON.parse(readFileSync(join(DIR, name), 'utf8')));
  if (!r.ok) throw new Error(`${name}: ${r.error}`);
  return r.keypair;
}

/** Splits a captured HTTP message into its head (with the blank line) and body. */
export function split(msg: Buffer): { head: string; body: Buffer } {
  const end = msg.indexOf('\r\n\r\n');
  if (end < 0) throw new Error('no header end');
  return { head: msg.subarray(0, end + 4).toString('latin1'), body: msg.subarray(end + 4) };
}

export const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
export const unhex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'hex'));
