// /checkv3: multipart/form-data with a metadata part (JSON or msgpack) and a message part.
// Mutates the multipart structure (boundary, part headers, part count, closing delimiter),
// the metadata object (types, sizes, nesting, reserved and prototype keys) and, for msgpack,
// the encoding itself (lying container and string lengths, deep nesting, extension types).
import { encode as msgpackEncode } from '@msgpack/msgpack';
import { zstdCompress } from '../../../src/http/zstd.js';
import { AWKWARD_STRINGS, byteMutate, mutateString } from '../mutate.js';
import { request, serialize } from '../http.js';
import { address, FLAGS, hostname, ipv4, protocolValue } from '../values.js';
import { Notes, scanExpected5xx, type FuzzInput, type Surface, type SurfaceContext } from '../surface.js';
import type { Rng } from '../rng.js';

/** Deepest nesting built into metadata (JSON.parse and msgpack decoders recurse). */
const MAX_DEPTH = 100_000;

function validMetadata(rng: Rng): Record<string, unknown> {
  const m: Record<string, unknown> = {
    from: address(rng),
    rcpt: Array.from({ length: rng.range(1, 3) }, () => address(rng)),
    ip: ipv4(rng),
    helo: hostname(rng),
  };
  if (rng.chance(0.5)) m.hostname = hostname(rng);
  if (rng.chance(0.3)) m.user = address(rng);
  if (rng.chance(0.3)) m.queue_id = rng.str(10, 'ABCDEF0123456789');
  if (rng.chance(0.2)) m.deliver_to = `<${address(rng)}>`;
  if (rng.chance(0.2)) m.settings_id = rng.pick(['outbound', 'x']);
  if (rng.chance(0.2)) m.settings = { actions: { reject: rng.int(30) }, symbols_disabled: ['GTUBE'] };
  if (rng.chance(0.3)) m.tls = { cipher: 'ECDHE-RSA-AES256-GCM-SHA384', version: 'TLSv1.3', cert_issuer: `CN=${hostname(rng)}` };
  if (rng.chance(0.2)) m.mta = { tag: rng.str(4), name: hostname(rng) };
  if (rng.chance(0.4)) m.flags = Array.from({ length: rng.range(1, 4) }, () => rng.pick(FLAGS));
  if (rng.chance(0.2)) m.raw = rng.chance(0.5);
  if (rng.chance(0.2)) m.headers = { 'X-Test': 'yes', Subject: 'hi' };
  if (rng.chance(0.1)) m.pass = 'all';
  if (rng.chance(0.1)) m.url_format = 'extended';
  if (rng.chance(0.1)) m.subject = 'subject';
  if (rng.chance(0.1)) m.filename = 'a.eml';
  return m;
}

function nested(depth: number, leaf: unknown, asArray: boolean): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = asArray ? [v] : { a: v };
  return v;
}

function oddValue(rng: Rng): unknown {
  return rng.pick<unknown>([null, true, 0, -1, 1e308, NaN, '', rng.pick(AWKWARD_STRINGS), [], {}, [1, 'a', null], { x: { y: 1 } }, new Uint8Array(rng.count(1000)), 2 ** 64]);
}

function mutateMetadata(rng: Rng, m: Record<string, unknown>, notes: Notes): void {
  const keys = ['from', 'rcpt', 'ip', 'helo', 'hostname', 'user', 'queue_id', 'deliver_to', 'settings_id', 'settings', 'tls', 'mta', 'flags', 'raw', 'log_tag', 'filename', 'subject', 'pass', 'url_format', 'headers'];
  for (let n = rng.count(5); n > 0; n--) {
    const k = rng.pick(keys);
    const what = rng.int(8);
    notes.add(`meta:${k}:${what}`);
    switch (what) {
      case 0: m[k] = oddValue(rng); break;
      case 1: m[k] = typeof m[k] === 'string' ? mutateString(rng, m[k]) : protocolValue(rng, k.replace('_', '-')); break;
      case 2: m[k] = Array.from({ length: rng.count(50_000) }, () => (k === 'flags' ? rng.pick(FLAGS) : address(rng))); break;
      case 3: m[k] = nested(Math.min(MAX_DEPTH, rng.count(MAX_DEPTH)), 'x', rng.chance(0.5)); break;
      case 4: { const h: Record<string, unknown> = {}; for (let i = rng.count(20_000); i > 0; i--) h[rng.chance(0.1) ? rng.pick(['Shm', 'File', 'Compression', 'Dictionary', 'Content-Encoding', 'Rcpt', 'IP', '__proto__', 'constructor']) : `X-H-${i}`] = rng.chance(0.8) ? 'v' : [rng.str(3), 1, null]; m.headers = h; break; }
      case 5: delete m[k]; break;
      // defineProperty: a plain assignment to __proto__ would set the prototype, not add a key.
      case 6: Object.defineProperty(m, rng.pick(['__proto__', 'constructor', 'toString', 'hasOwnProperty', rng.str(5)]), { value: oddValue(rng), enumerable: true, configurable: true, writable: true }); break;
      default: m[k] = { ...(typeof m[k] === 'object' && m[k] !== null ? (m[k] as object) : {}), [rng.str(4)]: oddValue(rng) };
    }
  }
}

/** Hand-made msgpack with lying lengths, deep nesting and odd extension types. */
function evilMsgpack(rng: Rng): Buffer {
  switch (rng.int(7)) {
    case 0: return Buffer.from([0xdd, 0xff, 0xff, 0xff, 0xff, 0x01]); // array32 of 4 billion, one element present
    case 1: return Buffer.from([0xdf, 0x7f, 0xff, 0xff, 0xff, 0xa1, 0x61, 0x01]); // map32 of 2 billion
    case 2: return Buffer.from([0x81, 0xa4, 0x66, 0x72, 0x6f, 0x6d, 0xdb, 0xff, 0xff, 0xff, 0xf0, 0x61]); // {from: str32 of 4 GB}
    case 3: return Buffer.alloc(rng.count(MAX_DEPTH), 0x91); // [[[[…]]]] without a leaf
    case 4: return Buffer.concat([Buffer.from([0x81, 0xa2, 0x69, 0x70]), Buffer.from([0xc7, 0xff, 0xff]), rng.bytes(rng.count(300))]); // {ip: ext8 type -1}
    case 5: return Buffer.concat([Buffer.from([0x81, 0xa4, 0x72, 0x63, 0x70, 0x74, 0xdc, 0xff, 0xff]), Buffer.alloc(rng.count(65535), 0xc0)]); // {rcpt: array16 of nils}
    default: return Buffer.from([0xc1]); // never-used byte
  }
}

export function v3Surface(ctx: SurfaceContext): Surface {
  return {
    name: 'v3',
    keepAlive: true,
    expected5xx: scanExpected5xx,
    generate(rng: Rng): FuzzInput {
      const notes = new Notes();
      const msgpack = rng.chance(0.4);
      notes.add(msgpack ? 'msgpack' : 'json');
      const meta = validMetadata(rng);
      if (rng.chance(0.7)) mutateMetadata(rng, meta, notes);
      let metaBytes: Buffer;
      if (msgpack) {
        if (rng.chance(0.15)) {
          notes.add('evil-msgpack');
          metaBytes = evilMsgpack(rng);
        } else {
          try {
            metaBytes = Buffer.from(msgpackEncode(meta, { ignoreUndefined: true, maxDepth: MAX_DEPTH + 10 }));
          } catch {
            metaBytes = Buffer.alloc(MAX_DEPTH, 0x91); // nesting the encoder refused to write (stack)
          }
        }
      } else {
        let text: string;
        try {
          text = JSON.stringify(meta);
        } catch {
          text = '{"from":"a@b"}'; // a nesting too deep for JSON.stringify itself
        }
        metaBytes = Buffer.from(text);
      }
      if (rng.chance(0.15)) { notes.add('meta-bytes'); metaBytes = byteMutate(rng, metaBytes); }
      let message = rng.pick(ctx.seeds.small);
      let msgEnc: string | undefined;
      if (rng.chance(0.15)) {
        msgEnc = 'zstd';
        message = zstdCompress(message);
        if (rng.chance(0.5)) { notes.add('zstd-mutated'); message = byteMutate(rng, message); }
      }
      let boundary = rng.chance(0.8) ? `fuzz${rng.str(16)}` : rng.pick(['', '"quoted"', 'a'.repeat(rng.count(5000)), 'x;y', 'with space', '--', rng.pick(AWKWARD_STRINGS)]);
      const parts: string[] = [];
      const bodies: Buffer[] = [];
      const part = (name: string, type: string, body: Buffer, extra = ''): void => {
        parts.push(`Content-Disposition: form-data; name="${name}"${extra}\r\nContent-Type: ${type}\r\n`);
        bodies.push(body);
      };
      if (!rng.chance(0.05)) part('metadata', msgpack ? rng.pick(['application/msgpack', 'application/x-msgpack']) : 'application/json', metaBytes);
      if (!rng.chance(0.05)) part('message', rng.pick(['application/octet-stream', 'message/rfc822', 'text/plain', '']), message, rng.chance(0.2) ? `; filename="${rng.pick(['a.eml', 'x'.repeat(3000), '"', '\r\n'])}"` : '');
      if (msgEnc) parts[parts.length - 1] += `Content-Encoding: ${rng.chance(0.9) ? msgEnc : rng.pick(['gzip', 'zstd, zstd', 'ZSTD'])}\r\n`;
      if (rng.chance(0.1)) { const n = rng.count(20_000); notes.add(`extra-parts:${n}`); for (let i = 0; i < n; i++) part(rng.pick(['metadata', 'message', `p${i}`]), 'text/plain', Buffer.from('x')); }
      if (parts.length && rng.chance(0.1)) { notes.add('part-headers'); parts[0] = mutateString(rng, parts[0]!); }
      const chunks: Buffer[] = [];
      for (let i = 0; i < parts.length; i++) chunks.push(Buffer.from(`--${boundary}\r\n${parts[i]}\r\n`, 'latin1'), bodies[i]!, Buffer.from('\r\n'));
      const close = rng.chance(0.9) ? `--${boundary}--\r\n` : rng.pick(['', `--${boundary}`, `--${boundary}-`, `${boundary}--`]);
      chunks.push(Buffer.from(close, 'latin1'));
      let body: Buffer = Buffer.concat(chunks);
      if (rng.chance(0.1)) { notes.add('body-bytes'); body = byteMutate(rng, body); }
      if (rng.chance(0.1)) { notes.add('boundary-changed'); boundary = mutateString(rng, boundary); }
      const ct = rng.chance(0.9) ? `multipart/form-data; boundary=${boundary.includes(';') || boundary.includes(' ') ? `"${boundary}"` : boundary}` : rng.pick(['multipart/form-data', 'multipart/mixed; boundary=x', 'text/plain', `multipart/form-data; boundary="${boundary}`, `multipart/form-data; boundary=${boundary}; boundary=other`]);
      const headers: Array<[string, string]> = [['Content-Type', ct]];
      if (rng.chance(0.2)) headers.push(['Accept', rng.pick(['application/msgpack', 'multipart/form-data', 'application/json'])]);
      if (rng.chance(0.1)) headers.push(['Accept-Encoding', 'zstd']);
      if (rng.chance(0.1)) headers.push(['Settings', protocolValue(rng, 'settings')]);
      return { bytes: serialize(request('POST', rng.chance(0.95) ? '/checkv3' : '/checkv2', headers, body)), port: 'scan', note: notes.toString() };
    },
  };
}
