// A finished milter message → the scan request Rspamd's proxy sends upstream (as
// Rspamd does in rspamd_milter_to_http and rspamd_milter_macro_http in milter.c).
// Headers are emitted in Rspamd's code order; a header is sent only when its source exists
// and is non-empty.

import type { RelayRequest } from '../relay-types.js';
import type { FinishedMessage, SessionState } from './session-state.js';

/** Header values travel on one HTTP header line: CR, LF and NUL from the MTA become spaces. */
function clean(v: string): string {
  return /[\r\n\0]/.test(v) ? v.replace(/[\r\n\0]/g, ' ') : v;
}

export interface BuildOptions {
  clientCaName?: string;
  /** The MTA's socket address: the key of `hash:` upstream rotation. */
  clientAddress?: string;
}

export function buildScanRequest(state: SessionState, msg: FinishedMessage, opts: BuildOptions = {}): RelayRequest {
  const headers: Array<[string, string]> = [];
  const add = (name: string, value: string | undefined): void => {
    if (value !== undefined && value.length > 0) headers.push([name, clean(value)]);
  };

  if (state.hostname !== undefined && state.hostname !== 'unknown') add('Hostname', state.hostname);
  add('Helo', state.helo);
  add('From', msg.from);
  for (const r of msg.rcpts) add('Rcpt', r);
  const a = state.address;
  if (a) add('IP', a.family === 'unix' ? a.path : a.v6 ? `[${a.ip}]:${a.port}` : `${a.ip}:${a.port}`);

  const m = (name: string): string | undefined => state.macro(name);
  add('Queue-ID', m('{i}') ?? m('i'));
  add('User-Agent', m('{v}') ?? m('v'));
  add('TLS-Cipher', m('{cipher}'));
  add('TLS-Version', m('{tls_version}'));
  add('User', m('{auth_authen}'));
  add('Mailer', m('{rcpt_mailer}'));
  const issuer = m('{cert_issuer}');
  add('TLS-Cert-Issuer', issuer);
  // Client-certificate authentication: only for the configured CA, compared byte for byte.
  if (opts.clientCaName !== undefined && issuer !== undefined && issuer === opts.clientCaName) add('User', m('{cert_subject}'));
  if (state.hostname === undefined || state.hostname.length === 0) {
    const cn = m('{client_name}');
    if (cn !== 'unknown') add('Hostname', cn);
  }
  add('MTA-Name', m('{daemon_name}') ?? m('{j}') ?? m('j'));
  headers.push(['Flags', 'milter,body_block']);
  // Rspamd adds this on its inline-body (POST) path; its recordings used the shm path.
  headers.push(['Content-Type', 'text/plain']);

  const req: RelayRequest = { method: 'POST', path: '/checkv2', headers, body: msg.body, route: {} };
  // Milter sessions carry no Host: always the default group.
  if (opts.clientAddress !== undefined) req.route = { clientAddress: opts.clientAddress };
  return req;
}
