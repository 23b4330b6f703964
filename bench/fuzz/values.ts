// Plausible and implausible values for the fields the scan protocol reads (request headers,
// query arguments, v3 metadata): each generator gives a well-formed value most of the time,
// so the parser behind the field is reached, and a mutated one otherwise.
import type { Rng } from './rng.js';
import { AWKWARD_STRINGS, mutateString } from './mutate.js';

export const FLAGS = ['pass_all', 'groups', 'zstd', 'no_log', 'no_stat', 'milter', 'profile', 'body_block', 'ext_urls', 'skip', 'skip_process', 'log', 'compress'];

export function ipv4(rng: Rng): string {
  return [rng.int(256), rng.int(256), rng.int(256), rng.int(256)].join('.');
}

export function ipv6(rng: Rng): string {
  const groups = Array.from({ length: 8 }, () => rng.int(0x10000).toString(16));
  if (rng.chance(0.5)) return groups.join(':');
  const a = rng.int(8);
  return `${groups.slice(0, a).join(':')}::${groups.slice(a + rng.int(8 - a)).join(':')}`;
}

const LABEL_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789-';
const TLDS = ['com', 'net', 'org', 'example', 'test', 'xn--p1ai', 'co.uk', 'ru', ''];

// A plain loop: Array.from with a callback was most of this function's cost, and generators
// call it thousands of times an input.
export function hostname(rng: Rng): string {
  let host = '';
  for (let n = rng.range(1, 4), i = 0; i < n; i++) host += (i ? '.' : '') + rng.str(rng.range(1, 12), LABEL_ALPHABET);
  return `${host}.${rng.pick(TLDS)}`;
}

export function address(rng: Rng): string {
  const local = rng.pick([rng.str(rng.range(1, 10)), `"${rng.str(4, 'ab @,;<>')}"`, `${rng.str(3)}+${rng.str(3)}`, rng.str(3, 'é日本')]);
  return `${local}@${rng.chance(0.1) ? `[${ipv4(rng)}]` : hostname(rng)}`;
}

function settingsJson(rng: Rng): string {
  switch (rng.int(6)) {
    case 0: return JSON.stringify({ actions: { reject: rng.pick([1, -1, 1e308, null, 'x']), 'add header': rng.int(20) } });
    case 1: return JSON.stringify({ symbols_enabled: Array.from({ length: rng.count(5000) }, () => rng.str(6).toUpperCase()) });
    case 2: return JSON.stringify({ scores: { GTUBE: rng.pick([0, 1e300, -1e300]) }, groups_disabled: ['headers'] });
    case 3: { const d = rng.count(20_000); return '{"a":'.repeat(d) + '1' + '}'.repeat(d); }
    case 4: return `{ actions { reject = ${rng.int(30)}; } }`; // UCL
    default: return mutateString(rng, '{"symbols_disabled":["R_DKIM_ALLOW"]}');
  }
}

/** A value for protocol header `name` (lower case). */
export function protocolValue(rng: Rng, name: string): string {
  if (rng.chance(0.15)) return rng.chance(0.5) ? rng.pick(AWKWARD_STRINGS) : mutateString(rng, protocolValue(rng, name));
  switch (name) {
    case 'ip': return rng.chance(0.6) ? ipv4(rng) : rng.chance(0.5) ? ipv6(rng) : rng.pick(['unknown', `[${ipv6(rng)}]`, `${ipv4(rng)}:25`, 'IPv6:::1']);
    case 'from': case 'rcpt': case 'deliver-to': return rng.chance(0.8) ? `<${address(rng)}>` : address(rng);
    case 'helo': case 'hostname': return hostname(rng);
    case 'user': return rng.chance(0.5) ? address(rng) : rng.str(8);
    case 'queue-id': case 'log-tag': case 'mta-tag': case 'mta-name': return rng.str(rng.range(1, 20), 'ABCDEF0123456789');
    case 'settings': return settingsJson(rng);
    case 'settings-id': return rng.pick(['', 'outbound', 'fixture_no_gtube', rng.str(8), 'a,b,c']);
    case 'flags': return Array.from({ length: rng.count(20) }, () => rng.pick(FLAGS)).join(rng.pick([',', ', ', ' ', ';']));
    case 'pass': return rng.pick(['all', 'none', '']);
    case 'raw': case 'json': case 'profile': case 'milter': case 'log': return rng.pick(['yes', 'no', 'true', '1', '0']);
    case 'filename': return rng.pick(['a.eml', '../../etc/passwd', 'x'.repeat(5000), 'é.zip']);
    case 'subject': return mutateString(rng, 'hello');
    case 'message-length': return String(rng.pick([0, 1, 100, -1, 2 ** 32, 2 ** 53]));
    case 'url-format': return rng.pick(['extended', 'plain', '']);
    case 'tls-cipher': return 'ECDHE-RSA-AES256-GCM-SHA384';
    case 'tls-version': return rng.pick(['TLSv1.2', 'TLSv1.3', 'SSLv3']);
    case 'tls-cert-issuer': return `CN=${hostname(rng)}`;
    case 'compression': case 'content-encoding': case 'accept-encoding': return rng.pick(['zstd', 'gzip', 'deflate', 'br', 'zstd, gzip', 'identity', 'ZSTD']);
    case 'dictionary': return rng.pick(['4242', '0', '1', '-1', 'abc', '4242 ', '99999999999']);
    case 'accept': return rng.pick(['application/json', 'application/msgpack', 'application/x-msgpack', 'multipart/form-data', '*/*', 'text/plain']);
    case 'content-type': return rng.pick(['text/plain', 'message/rfc822', 'application/octet-stream', 'multipart/form-data; boundary=x', 'application/json']);
    case 'connection': return rng.pick(['keep-alive', 'close', 'upgrade', '']);
    case 'expect': return rng.pick(['100-continue', '200-ok']);
    case 'host': return hostname(rng);
    case 'password': return rng.pick(['fuzz-read', 'fuzz-enable', 'wrong', '']);
    case 'key': return `${rng.str(8, 'abcdefghijkmnopqrstuwxyz13456789')}=${rng.str(52, 'abcdefghijkmnopqrstuwxyz13456789')}`;
    case 'shm': return `/mailsift-fuzz-${rng.str(6)}`;
    case 'shm-offset': case 'shm-length': return String(rng.pick([0, 1, -1, 2 ** 31, 2 ** 53]));
    // Paths that do not exist or are harmless to read: the fuzzer must never make the server read a device.
    case 'file': return rng.pick(['/nonexistent/mailsift-fuzz', '/tmp', '', 'relative.eml', '/etc/hostname']);
    case 'mailer': case 'user-agent': return rng.pick(['rspamc', 'Haraka', 'exim', rng.str(10)]);
    default: return rng.str(rng.range(0, 20));
  }
}

export const PROTOCOL_HEADERS = [
  'IP', 'From', 'Rcpt', 'Helo', 'Hostname', 'User', 'Queue-Id', 'Deliver-To', 'Settings', 'Settings-ID', 'Flags', 'Pass', 'Raw', 'Json', 'Profile',
  'Filename', 'Subject', 'Message-Length', 'URL-Format', 'TLS-Cipher', 'TLS-Version', 'TLS-Cert-Issuer', 'MTA-Tag', 'MTA-Name', 'Log-Tag', 'Log',
  'Milter', 'Mailer', 'User-Agent', 'Compression', 'Dictionary', 'Content-Encoding', 'Accept', 'Accept-Encoding', 'Content-Type', 'Connection',
  'Expect', 'Host', 'Password', 'Key', 'Shm', 'Shm-Offset', 'Shm-Length', 'File',
];
