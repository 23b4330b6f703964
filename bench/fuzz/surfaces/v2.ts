// /checkv2 (and its legacy siblings) request lines and headers: methods, paths, query
// arguments, protocol header names and values, Content-Length lies, header floods. Bodies are
// small messages: the framing is under test here, the content in the mime surface.
import { byteMutate, pct } from '../mutate.js';
import { header, headerFlood, lieAboutLength, mutateHeaderName, mutateRequestLine, parseRequest, request, serialize, type RawRequest } from '../http.js';
import { PROTOCOL_HEADERS, protocolValue } from '../values.js';
import { Notes, scanExpected5xx, type FuzzInput, type Surface, type SurfaceContext } from '../surface.js';
import type { Rng } from '../rng.js';

export const SCAN_PATHS = [
  '/checkv2', '/check', '/symbols', '/checkv3', '/ping', '/skip', '/process', '/report', '/report_ifspam', '/CHECKV2', '/checkv2/', '//checkv2',
  '/checkv2?', '/checkv2%00', '*', 'http://localhost/checkv2', '/../checkv2', '/./checkv2', `/${'a'.repeat(10_000)}`, '', '/metrics', '/stat',
  '/checkv2#frag', '/check%76%32', '/checkv2;x', 'checkv2',
];

function queryArgs(rng: Rng): string {
  const n = rng.count(2000);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    const name = rng.pick(PROTOCOL_HEADERS).toLowerCase();
    const v = protocolValue(rng, name);
    parts.push(`${rng.chance(0.1) ? pct(name) : name}=${rng.chance(0.7) ? pct(v) : v.replace(/[\s#]/g, '')}`);
  }
  return parts.join(rng.chance(0.9) ? '&' : ';');
}

export function baseScanRequest(rng: Rng, ctx: SurfaceContext, notes: Notes): RawRequest {
  if (ctx.seeds.scanRequests.length && rng.chance(0.5)) {
    const i = rng.int(ctx.seeds.scanRequests.length);
    const r = parseRequest(ctx.seeds.scanRequests[i]!);
    if (r) {
      notes.add(`fixture-request#${i}`);
      return r;
    }
  }
  const msg = rng.pick(ctx.seeds.small);
  const headers: Array<[string, string]> = [];
  for (let n = rng.int(6); n > 0; n--) {
    const h = rng.pick(PROTOCOL_HEADERS);
    headers.push([h, protocolValue(rng, h.toLowerCase())]);
  }
  notes.add('synthetic-request');
  return request('POST', rng.pick(['/checkv2', '/checkv2', '/check', '/symbols']), headers, msg);
}

export function mutateScanRequest(rng: Rng, r: RawRequest, notes: Notes): void {
  for (let n = rng.count(4); n > 0; n--) {
    const what = rng.weighted<string>([[3, 'line'], [2, 'query'], [5, 'add'], [3, 'value'], [2, 'name'], [1, 'flood'], [2, 'length'], [1, 'body'], [1, 'drop']]);
    notes.add(what);
    switch (what) {
      case 'line': mutateRequestLine(rng, r, SCAN_PATHS); break;
      case 'query': r.target = `${r.target.split('?')[0]}?${queryArgs(rng)}`; break;
      case 'add': { const h = rng.pick(PROTOCOL_HEADERS); r.headers.push([h, protocolValue(rng, h.toLowerCase())]); break; }
      case 'value': if (r.headers.length) { const i = rng.int(r.headers.length); r.headers[i] = [r.headers[i]![0], protocolValue(rng, r.headers[i]![0].toLowerCase())]; } break;
      case 'name': if (r.headers.length) { const i = rng.int(r.headers.length); r.headers[i] = [mutateHeaderName(rng, r.headers[i]![0]), r.headers[i]![1]]; } break;
      case 'flood': headerFlood(rng, r, PROTOCOL_HEADERS); break;
      case 'length': lieAboutLength(rng, r); break;
      case 'body': r.body = byteMutate(rng, r.body); break;
      default: if (r.headers.length) r.headers.splice(rng.int(r.headers.length), 1);
    }
  }
  if (header(r, 'Transfer-Encoding') === undefined && rng.chance(0.05)) r.headers.push(['Expect', '100-continue']);
}

export function v2Surface(ctx: SurfaceContext): Surface {
  return {
    name: 'v2',
    keepAlive: false,
    expected5xx: scanExpected5xx,
    generate(rng: Rng): FuzzInput {
      const notes = new Notes();
      const r = baseScanRequest(rng, ctx, notes);
      mutateScanRequest(rng, r, notes);
      return { bytes: serialize(r), port: 'scan', note: notes.toString() };
    },
  };
}
