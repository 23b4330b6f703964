// Controller routes: every route with its own parameters (query strings,
// JSON bodies of the save endpoints, the Map/Classifier/Flag/Weight/Hash headers, messages
// for learn and scan routes), sent with the enable password so the handlers run, then
// mutated. /savemap is only ever aimed at maps whose file lies inside the fuzz server's temp
// dir (SurfaceContext.writableMapIds): see isSafeForController.
import { AWKWARD_STRINGS, byteMutate, mutateString, pct } from '../mutate.js';
import { headerFlood, lieAboutLength, mutateHeaderName, mutateRequestLine, request, serialize, type RawRequest } from '../http.js';
import { ENABLE_PASSWORD, READ_PASSWORD } from '../server.js';
import { Notes, type FuzzInput, type Surface, type SurfaceContext } from '../surface.js';
import type { Rng } from '../rng.js';

const GET_ROUTES = [
  '/actions', '/symbols', '/errors', '/pie', '/ping', '/healthy', '/ready', '/neighbours', '/historyreset', '/bayes/classifiers', '/maps', '/metrics',
  '/counters', '/plugins', '/auth', '/stat', '/statreset', '/plugins/fuzzy/storages', '/plugins/maps/list', '/', '/index.html', '/../../etc/passwd',
];
const SYMBOL_NAMES = ['GTUBE', 'R_DKIM_ALLOW', 'BAYES_SPAM', 'MISSING_DATE', 'R_SPF_FAIL', 'NOT_A_SYMBOL', ''];

function num(rng: Rng): unknown {
  return rng.pick<unknown>([rng.int(30), -rng.int(30), rng.float() * 20, null, 'x', 1e308, -1e308, 0, true, [], {}, '15', 1e-320]);
}

function json(rng: Rng, v: unknown): string {
  // Numbers JSON cannot spell (1e309, NaN) and raw fragments are written as text.
  const text = JSON.stringify(v) ?? 'null';
  return rng.chance(0.1) ? text.replace(/\d+(\.\d+)?/, rng.pick(['1e309', 'NaN', '-Infinity', '0x10', '01', '1.', '.5', '--1'])) : text;
}

function saveBody(rng: Rng, route: string): string {
  if (route === '/saveactions') {
    if (rng.chance(0.2)) return json(rng, { actions: [num(rng), num(rng)] });
    return json(rng, Array.from({ length: rng.chance(0.8) ? 4 : rng.count(10_000) }, () => num(rng)));
  }
  const n = rng.count(5000);
  return json(rng, Array.from({ length: n }, () => (rng.chance(0.9) ? { name: rng.chance(0.8) ? rng.pick(SYMBOL_NAMES) : rng.pick(AWKWARD_STRINGS), value: num(rng) } : num(rng))));
}

function query(rng: Rng, keys: readonly string[], values: (k: string) => string): string {
  const parts: string[] = [];
  for (let n = rng.count(2000); n > 0; n--) {
    const k = rng.pick(keys);
    parts.push(`${k}=${pct(values(k))}`);
  }
  return parts.join('&');
}

function routeRequest(rng: Rng, ctx: SurfaceContext, notes: Notes): RawRequest {
  const kind = rng.weighted<string>([[4, 'get'], [2, 'graph'], [2, 'history'], [3, 'save'], [2, 'map'], [3, 'learn'], [2, 'fuzzy'], [2, 'scan'], [2, 'plugin']]);
  notes.add(kind);
  switch (kind) {
    case 'graph': return request('GET', `/graph?${query(rng, ['type'], () => rng.pick(['day', 'week', 'month', 'year', 'hourly', 'daily', 'DAY', '', 'x'.repeat(1000)]))}`, []);
    case 'history': return request('GET', `/history?${query(rng, ['from', 'to'], () => String(rng.pick([0, 9, -1, 2 ** 31, 2 ** 53, 1e308, 'x', ''])))}`, []);
    case 'save': {
      const route = rng.pick(['/saveactions', '/savesymbols']);
      return request('POST', route, [['Content-Type', 'application/json']], Buffer.from(saveBody(rng, route)));
    }
    case 'map': {
      const get = rng.chance(0.5);
      const ids = get ? ctx.mapIds : ctx.writableMapIds;
      const id = ids.length && rng.chance(0.7) ? String(rng.pick(ids)) : rng.pick(['', 'x', '-1', '4294967296', '99999', ' 7 ', '0']);
      const body = get ? Buffer.alloc(0) : Buffer.from(Array.from({ length: rng.count(20_000) }, () => rng.pick(['192.0.2.1', '/re/i', 'example.com', '# c', '*.x', rng.pick(AWKWARD_STRINGS), '10.0.0.0/8 5'])).join('\n'));
      return request(get ? 'GET' : 'POST', get ? '/getmap' : '/savemap', [['Map', id]], body);
    }
    case 'learn': {
      const route = rng.pick(['/learnspam', '/learnham']);
      const headers: Array<[string, string]> = [];
      if (rng.chance(0.3)) headers.push(['Classifier', rng.pick(['bayes', 'nope', ''])]);
      if (rng.chance(0.2)) headers.push(['Rcpt', 'user@example.com'], ['Deliver-To', 'user@example.com']);
      if (rng.chance(0.1)) headers.push(['Learn-Type', rng.pick(['spam', 'ham', 'x'])]);
      return request('POST', route, headers, rng.pick(ctx.seeds.small));
    }
    case 'fuzzy': {
      const route = rng.pick(['/fuzzyadd', '/fuzzydel', '/fuzzydelhash', '/plugins/fuzzy/hashes']);
      const headers: Array<[string, string]> = [];
      if (rng.chance(0.7)) headers.push(['Flag', String(rng.pick([1, 2, 0, -1, 2 ** 32, 'x']))]);
      if (rng.chance(0.5)) headers.push(['Weight', String(rng.pick([1, 10, -1, 1e308, 'x']))]);
      if (route === '/fuzzydelhash') for (let n = rng.count(1000); n > 0; n--) headers.push(['Hash', rng.chance(0.8) ? rng.str(128, '0123456789abcdef') : rng.pick(AWKWARD_STRINGS)]);
      if (rng.chance(0.2)) headers.push(['Symbol', rng.pick(['FUZZY_DENIED', 'x'])]);
      const target = route === '/plugins/fuzzy/hashes' ? `${route}?${rng.chance(0.5) ? 'rule=' : 'flag='}${rng.pick(['1', 'x', ''])}` : route;
      return request('POST', target, headers, rng.pick(ctx.seeds.small));
    }
    case 'scan': return request('POST', rng.pick(['/checkv2', '/check', '/scan']), [], rng.pick(ctx.seeds.small));
    case 'plugin': {
      const ep = rng.pick(['list', 'query', 'query_specific', 'query_json', 'nope']);
      const q = query(rng, ['value', 'map', 'maps', 'name', 'callback'], (k) => (k === 'value' ? rng.pick(['192.0.2.1', 'example.com', 'a@b.c', '', rng.pick(AWKWARD_STRINGS)]) : rng.pick(['1', 'all', '', 'x'])));
      return rng.chance(0.5) ? request('GET', `/plugins/maps/${ep}?${q}`, []) : request('POST', `/plugins/maps/${ep}`, [['Content-Type', 'application/x-www-form-urlencoded']], Buffer.from(q));
    }
    default: return request(rng.chance(0.8) ? 'GET' : 'POST', rng.pick(GET_ROUTES), []);
  }
}

/**
 * The controller's documented 5xx replies (Rspamd 3.4 answers these with 500,
 * 503, 505 or 506); any other 5xx is a finding.
 */
const DOCUMENTED_500 = /\d+ workers are not responding|no healthy scanner workers are running|Invalid method|Module has no rules|Module disabled|Save error|Map read error|Map write error|Map rename error|IO timeout with fuzzy storage|Cannot query rrd|invalid selector|cannot generate hashes|Invalid cache|Unknown statistics error|Cannot push learned results|Add symbol failed/;

export function controllerExpected5xx(status: number, head: string, body: Buffer): boolean {
  if (status === 503 || status === 505 || status === 506) return true;
  return status === 500 && (DOCUMENTED_500.test(head.split('\r\n')[0] ?? '') || DOCUMENTED_500.test(body.toString('latin1', 0, 500)));
}

/** The map id a /savemap request names, if any (as the controller reads the Map header). */
function savemapIds(bytes: Buffer): { savemap: boolean; ids: number[] } {
  const headEnd = bytes.indexOf('\r\n\r\n');
  const head = bytes.toString('latin1', 0, headEnd < 0 ? Math.min(bytes.length, 1 << 20) : headEnd);
  const lines = head.split(/\r?\n|\r/);
  let line = lines[0] ?? '';
  try {
    line = decodeURIComponent(line);
  } catch { /* keep it undecoded */ }
  const ids: number[] = [];
  for (const l of lines.slice(1)) {
    const m = /^\s*map\s*:\s*(\d+)\s*$/i.exec(l);
    if (m) ids.push(Number(m[1]));
  }
  return { savemap: /savemap/i.test(line.replace(/[^a-z]/gi, '')), ids };
}

/** False when the request could make the server overwrite a map file outside its temp dir. */
export function isSafeForController(bytes: Buffer, ctx: SurfaceContext): boolean {
  const { savemap, ids } = savemapIds(bytes);
  if (!savemap) return true;
  return ids.every((id) => !ctx.mapIds.includes(id) || ctx.writableMapIds.includes(id));
}

export function controllerSurface(ctx: SurfaceContext): Surface {
  return {
    name: 'controller',
    keepAlive: true,
    expected5xx: controllerExpected5xx,
    generate(rng: Rng): FuzzInput {
      const notes = new Notes();
      const r = routeRequest(rng, ctx, notes);
      const pw = rng.weighted<string>([[8, ENABLE_PASSWORD], [1, READ_PASSWORD], [1, 'wrong'], [1, '']]);
      if (pw) {
        if (rng.chance(0.85)) r.headers.push([rng.chance(0.9) ? 'Password' : 'password', pw]);
        else r.target += `${r.target.includes('?') ? '&' : '?'}password=${pct(pw)}`;
      }
      for (let n = rng.chance(0.3) ? 0 : rng.count(3); n > 0; n--) {
        const what = rng.weighted<string>([[3, 'body'], [2, 'target'], [1, 'line'], [1, 'header'], [1, 'flood'], [1, 'length']]);
        notes.add(what);
        switch (what) {
          case 'body': r.body = rng.chance(0.5) ? Buffer.from(mutateString(rng, r.body.toString('latin1')), 'latin1') : byteMutate(rng, r.body); break;
          case 'target': r.target = mutateString(rng, r.target); break;
          case 'line': mutateRequestLine(rng, r, GET_ROUTES); break;
          case 'header': if (r.headers.length) { const i = rng.int(r.headers.length); r.headers[i] = rng.chance(0.5) ? [mutateHeaderName(rng, r.headers[i]![0]), r.headers[i]![1]] : [r.headers[i]![0], mutateString(rng, r.headers[i]![1])]; } break;
          case 'flood': headerFlood(rng, r, ['Password', 'Map', 'Hash', 'Flag', 'X-Forwarded-For', 'Classifier']); break;
          default: lieAboutLength(rng, r);
        }
      }
      let bytes = serialize(r);
      if (!isSafeForController(bytes, ctx)) {
        notes.add('savemap-made-safe');
        bytes = serialize(request('POST', '/savemap', [['Password', ENABLE_PASSWORD], ['Map', ctx.writableMapIds.length ? String(ctx.writableMapIds[0]) : 'x']], Buffer.from('192.0.2.1\n')));
      }
      return { bytes, port: 'controller', note: notes.toString() };
    },
  };
}
