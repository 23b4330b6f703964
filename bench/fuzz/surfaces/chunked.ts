// Chunked transfer framing: chunk sizes (case, leading zeros, overflow, signs, extensions),
// chunk boundaries, missing or bare-LF terminators, trailers, the last chunk, many tiny
// chunks, and conflicting Transfer-Encoding / Content-Length headers.
import { byteMutate } from '../mutate.js';
import { request, serialize } from '../http.js';
import { PROTOCOL_HEADERS, protocolValue } from '../values.js';
import { Notes, scanExpected5xx, type FuzzInput, type Surface, type SurfaceContext } from '../surface.js';
import type { Rng } from '../rng.js';

/** Most chunks one input is cut into (1-byte chunks of a small message). */
const MAX_CHUNKS = 100_000;

function sizeText(rng: Rng, n: number): string {
  const hex = n.toString(16);
  switch (rng.int(14)) {
    case 0: return hex.toUpperCase();
    case 1: return `${'0'.repeat(rng.count(100))}${hex}`;
    case 2: return `${hex};ext=${rng.str(rng.count(300))}`;
    case 3: return `${hex} `;
    case 4: return `${hex}\t;a="b;c"`;
    case 5: return rng.pick(['ffffffffffffffff', '10000000000000000', '7fffffff', '-1', '+1', '0x10', '', ' ', 'g', '1_0', '١']);
    case 6: return (n + rng.range(1, 5)).toString(16);
    case 7: return Math.max(0, n - rng.range(1, 5)).toString(16);
    default: return hex;
  }
}

export function chunkedSurface(ctx: SurfaceContext): Surface {
  return {
    name: 'chunked',
    keepAlive: false,
    expected5xx: scanExpected5xx,
    generate(rng: Rng): FuzzInput {
      const notes = new Notes();
      const msg = rng.pick(ctx.seeds.small);
      const sizes: number[] = [];
      const style = rng.weighted<string>([[4, 'random'], [1, 'tiny'], [2, 'one']]);
      notes.add(style);
      let left = msg.length;
      while (left > 0 && sizes.length < MAX_CHUNKS) {
        const s = style === 'tiny' ? 1 : style === 'one' ? left : Math.min(left, rng.range(1, 4096));
        sizes.push(s);
        left -= s;
      }
      if (left > 0) sizes.push(left);
      const out: Buffer[] = [];
      let pos = 0;
      const mutateEach = rng.chance(0.7) ? 0.02 : 0.3;
      for (const s of sizes) {
        const eolA = rng.chance(mutateEach / 4) ? rng.pick(['\n', '\r', '', '\r\r\n']) : '\r\n';
        const eolB = rng.chance(mutateEach / 4) ? rng.pick(['\n', '\r', '', 'XX']) : '\r\n';
        const text = rng.chance(mutateEach) ? sizeText(rng, s) : s.toString(16);
        out.push(Buffer.from(text + eolA, 'latin1'), msg.subarray(pos, pos + s), Buffer.from(eolB, 'latin1'));
        pos += s;
      }
      // The last chunk, trailers, and what follows.
      switch (rng.weighted<string>([[6, 'normal'], [1, 'none'], [1, 'trailers'], [1, 'many-trailers'], [1, 'extra'], [1, 'lf']])) {
        case 'none': notes.add('no-last-chunk'); break;
        case 'trailers': notes.add('trailers'); out.push(Buffer.from(`0\r\nX-Trailer: ${'t'.repeat(rng.count(100_000))}\r\n\r\n`)); break;
        case 'many-trailers': { notes.add('many-trailers'); const n = rng.count(50_000); out.push(Buffer.from(`0\r\n${'T: v\r\n'.repeat(n)}\r\n`)); break; }
        case 'extra': notes.add('data-after-last'); out.push(Buffer.from('0\r\n\r\n'), serialize(request('GET', '/ping', []))); break;
        case 'lf': notes.add('lf-last'); out.push(Buffer.from('0\n\n')); break;
        default: out.push(Buffer.from('0\r\n\r\n'));
      }
      let body: Buffer = Buffer.concat(out);
      if (rng.chance(0.2)) {
        notes.add('bytes');
        body = byteMutate(rng, body);
      }
      const headers: Array<[string, string]> = [];
      for (let n = rng.int(3); n > 0; n--) {
        const h = rng.pick(PROTOCOL_HEADERS.slice(0, 12));
        headers.push([h, protocolValue(rng, h.toLowerCase())]);
      }
      const te = rng.chance(0.8) ? 'chunked' : rng.pick(['Chunked', 'chunked, chunked', 'gzip, chunked', 'identity, chunked', ' chunked ', 'chunked;x=1', 'x-chunked']);
      headers.push(['Transfer-Encoding', te]);
      if (rng.chance(0.1)) { notes.add('also-length'); headers.push(['Content-Length', String(rng.chance(0.5) ? msg.length : body.length)]); }
      if (rng.chance(0.05)) { notes.add('two-te'); headers.push(['Transfer-Encoding', 'chunked']); }
      const r = request('POST', rng.pick(['/checkv2', '/checkv2', '/check', '/symbols']), headers, body);
      if (rng.chance(0.1)) { r.version = 'HTTP/1.0'; notes.add('http10'); }
      return { bytes: serialize(r), port: 'scan', note: notes.toString() };
    },
  };
}
