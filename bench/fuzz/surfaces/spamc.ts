// spamc / RSPAMC requests as real clients sent them (fixtures/spamc: Debian spamc 4.0.1 and
// hand-written RSPAMC lines), to both places that read the legacy text protocols: the normal
// workers (legacy_compat: spamd, the default) and the proxy worker in HTTP mode, which upgrades
// the line to /checkv2 and renders the reply itself (legacy_compat: rspamd in the fuzz server).
// Mutations work on the parts of a request: the command line, each header line, the
// Content-length, the body (another message, zlib), line endings; then bytes.
import { byteMutate, mutateString } from '../mutate.js';
import { Notes, scanExpected5xx, type FuzzInput, type Surface, type SurfaceContext } from '../surface.js';
import type { Rng } from '../rng.js';
import { ODD_VERBS, TELL_HEADERS, TOKENS, VERBS, zlibBody } from './legacy.js';

interface LegacyRequest {
  verb: string;
  token: string;
  headers: Array<[string, string]>;
  body: Buffer;
  nl: string;
}

function parse(b: Buffer): LegacyRequest | undefined {
  const end = b.indexOf('\r\n\r\n');
  const endLf = b.indexOf('\n\n');
  const useCrlf = end >= 0 && (endLf < 0 || end < endLf);
  const at = useCrlf ? end : endLf;
  if (at < 0) return undefined;
  const nl = useCrlf ? '\r\n' : '\n';
  const lines = b.toString('latin1', 0, at).split(nl);
  const [verb = '', token = ''] = lines[0]!.split(' ');
  const headers = lines.slice(1).map((l): [string, string] => {
    const c = l.indexOf(':');
    return c < 0 ? [l, ''] : [l.slice(0, c), l.slice(c + 1).trim()];
  });
  return { verb, token, headers, body: b.subarray(at + nl.length * 2), nl };
}

function serialize(r: LegacyRequest): Buffer {
  const head = `${r.verb} ${r.token}${r.nl}${r.headers.map(([k, v]) => `${k}: ${v}${r.nl}`).join('')}${r.nl}`;
  return Buffer.concat([Buffer.from(head, 'latin1'), r.body]);
}

const LENGTH = /^content-length$/i;

function setLength(r: LegacyRequest, value: string): void {
  r.headers = r.headers.filter(([k]) => !LENGTH.test(k));
  r.headers.push(['Content-length', value]);
}

const HEADER_NAMES = ['User', 'From', 'Rcpt', 'IP', 'Helo', 'Hostname', 'Queue-ID', 'Compress', 'Message-class', 'Set', 'Remove', 'Pass', 'Subject', 'Deliver-To', 'Settings-ID', 'Flags', 'Content-length', 'Spam', 'X-Unknown'];

function mutate(rng: Rng, r: LegacyRequest, ctx: SurfaceContext, notes: Notes): void {
  for (let n = rng.count(4); n > 0; n--) {
    const what = rng.weighted<string>([[3, 'verb'], [3, 'token'], [4, 'header'], [3, 'value'], [1, 'drop'], [4, 'length'], [2, 'message'], [1, 'zlib'], [1, 'nl'], [1, 'tell'], [1, 'flood'], [2, 'body']]);
    notes.add(what);
    switch (what) {
      case 'verb': r.verb = rng.chance(0.7) ? rng.pick(VERBS) : rng.chance(0.5) ? rng.pick(ODD_VERBS) : mutateString(rng, r.verb); break;
      case 'token': r.token = rng.chance(0.7) ? rng.pick(TOKENS) : mutateString(rng, r.token); break;
      case 'header': r.headers.splice(rng.int(r.headers.length + 1), 0, [rng.pick(HEADER_NAMES), mutateString(rng, rng.pick(['root', '<a@b>', '1.2.3.4', 'spam', 'local', '']))]); break;
      case 'value': if (r.headers.length) { const i = rng.int(r.headers.length); r.headers[i] = [r.headers[i]![0], mutateString(rng, r.headers[i]![1])]; } break;
      case 'drop': if (r.headers.length) r.headers.splice(rng.int(r.headers.length), 1); break;
      case 'length': {
        const len = r.body.length;
        setLength(r, rng.pick([String(len), String(rng.int(len + 1)), String(len + rng.count(100_000)), '-1', '', ' 12', '0x10', '1e3', '99999999999999999999', String(len) + ' ' + String(len)]));
        if (rng.chance(0.2)) r.headers.push(['Content-Length', String(len + 1)]);
        break;
      }
      case 'message': r.body = rng.pick(ctx.seeds.small); setLength(r, String(r.body.length)); break;
      case 'zlib': r.headers = r.headers.filter(([k]) => !/^compress$/i.test(k)); r.headers.push(['Compress', rng.chance(0.9) ? 'zlib' : rng.pick(['gzip', '', 'ZLIB'])]); r.body = zlibBody(rng, r.body, notes); setLength(r, String(r.body.length)); break;
      case 'nl': r.nl = rng.pick(['\r\n', '\n', '\r', '\n\r']); break;
      case 'tell': r.verb = 'TELL'; for (const [name, values] of TELL_HEADERS) if (rng.chance(0.6)) r.headers.push([name, rng.pick(values)]); break;
      case 'flood': { const h = rng.pick(HEADER_NAMES); for (let k = rng.count(5000); k > 0; k--) r.headers.push([h, `v${k}`]); break; }
      default: r.body = byteMutate(rng, r.body);
    }
  }
}

export function spamcSurface(ctx: SurfaceContext): Surface {
  const seeds = ctx.seeds.spamcRequests;
  return {
    name: 'spamc',
    keepAlive: false,
    proxyMode: 'http',
    expected5xx: scanExpected5xx,
    generate(rng: Rng): FuzzInput {
      const notes = new Notes();
      // Half to the normal workers (spamd behaviour), half through the proxy (Rspamd 3.4's).
      const port = rng.chance(0.5) ? 'scan' : 'proxy';
      notes.add(port);
      const i = rng.int(Math.max(1, seeds.length));
      const seed = seeds[i];
      const r = seed ? parse(seed) : undefined;
      let bytes: Buffer;
      if (r) {
        notes.add(`fixture-request#${i}`);
        if (rng.chance(0.9)) mutate(rng, r, ctx, notes);
        bytes = serialize(r);
      } else {
        const msg = rng.pick(ctx.seeds.small);
        bytes = Buffer.concat([Buffer.from(`CHECK SPAMC/1.5\r\nContent-length: ${msg.length}\r\n\r\n`), msg]);
      }
      if (rng.chance(0.2)) {
        notes.add('bytes');
        bytes = byteMutate(rng, bytes, seeds);
      }
      return { bytes, port, note: notes.toString() };
    },
  };
}
