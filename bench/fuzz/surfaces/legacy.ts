// spamc / RSPAMC text requests (src/protocol/legacy-*.ts): every verb and odd ones, tokens,
// Content-length lies, `Compress: zlib` bodies (valid, corrupt, bombs), spamc's TELL headers and
// the v2 protocol headers both dialects read, then byte mutations of the whole request. Replies
// are status lines, not HTTP: the fuzzer counts them as `not-http`; crashes, hangs and memory
// growth are what this surface can find.
import { deflateSync } from 'node:zlib';
import { byteMutate } from '../mutate.js';
import { PROTOCOL_HEADERS, protocolValue } from '../values.js';
import { Notes, scanExpected5xx, type FuzzInput, type Surface, type SurfaceContext } from '../surface.js';
import type { Rng } from '../rng.js';

export const VERBS = ['CHECK', 'SYMBOLS', 'REPORT', 'REPORT_IFSPAM', 'PROCESS', 'HEADERS', 'PING', 'SKIP', 'TELL'];
export const ODD_VERBS = ['check', 'CHECKX', 'FOO', '', 'PROCESS PROCESS', 'C'.repeat(5000), 'GET', 'SYMBOLS\t'];
export const TOKENS = ['SPAMC/1.5', 'SPAMC/1.2', 'SPAMC/1.0', 'RSPAMC/1.3', 'RSPAMC/1.2', 'S', 'R', 'SPAMC/', 'SPAMC/9.9 extra words', 'spamc/1.5', 'X', '', 'HTTP/1.1'];
export const TELL_HEADERS: Array<[string, string[]]> = [
  ['Message-class', ['spam', 'ham', '', 'both', 'x'.repeat(300)]],
  ['Set', ['local', 'remote', 'local,remote', '', ',,,']],
  ['Remove', ['local', 'remote', 'local, remote']],
  ['User', ['root', 'bob', '', 'a'.repeat(10_000)]],
];
/** What the zlib bomb inflates to: past the fuzz server's max_message (Rspamd's 50 MiB). */
const BOMB_BYTES = 64 * 1024 * 1024;
let bomb: Buffer | undefined;
/** Made once (65 KiB of zlib): deflating 64 MiB per input would slow the campaign, not the server. */
function zlibBomb(): Buffer {
  bomb ??= deflateSync(Buffer.alloc(BOMB_BYTES), { level: 9 });
  return bomb;
}

export function zlibBody(rng: Rng, msg: Buffer, notes: Notes): Buffer {
  switch (rng.weighted<string>([[5, 'ok'], [2, 'corrupt'], [1, 'bomb'], [1, 'raw']])) {
    case 'corrupt': notes.add('zlib-corrupt'); return byteMutate(rng, deflateSync(msg));
    case 'bomb': notes.add('zlib-bomb'); return zlibBomb();
    case 'raw': notes.add('zlib-header-plain-body'); return msg;
    default: notes.add('zlib'); return deflateSync(msg);
  }
}

export function legacySurface(ctx: SurfaceContext): Surface {
  return {
    name: 'legacy',
    // One text request per connection, closed by the server after its reply.
    keepAlive: false,
    expected5xx: scanExpected5xx,
    generate(rng: Rng): FuzzInput {
      const notes = new Notes();
      const verb = rng.chance(0.9) ? rng.pick(VERBS) : rng.pick(ODD_VERBS);
      const token = rng.chance(0.85) ? rng.pick(TOKENS.slice(0, 5)) : rng.pick(TOKENS);
      notes.add(`${verb.slice(0, 16)} ${token}`);
      const msg = rng.pick(ctx.seeds.small);
      const headers: Array<[string, string]> = [];
      let body = msg;
      if (rng.chance(0.15)) {
        headers.push(['Compress', rng.chance(0.9) ? 'zlib' : rng.pick(['gzip', 'ZLIB', '', 'zstd'])]);
        body = zlibBody(rng, msg, notes);
      }
      if (verb === 'TELL' || rng.chance(0.1)) for (const [name, values] of TELL_HEADERS) if (rng.chance(0.6)) headers.push([name, rng.pick(values)]);
      for (let n = rng.int(4); n > 0; n--) {
        const h = rng.pick(PROTOCOL_HEADERS);
        headers.push([h, protocolValue(rng, h.toLowerCase())]);
      }
      const length = rng.weighted<string>([[8, 'exact'], [1, 'none'], [1, 'short'], [1, 'long'], [1, 'garbage'], [1, 'twice']]);
      if (length !== 'exact') notes.add(`length-${length}`);
      const name = rng.pick(['Content-length', 'Content-Length', 'content-length']);
      switch (length) {
        case 'exact': headers.push([name, String(body.length)]); break;
        case 'short': headers.push([name, String(rng.int(body.length + 1))]); break;
        case 'long': headers.push([name, String(body.length + rng.count(100_000))]); break;
        case 'garbage': headers.push([name, rng.pick(['-1', '1e3', ' 12', '0x10', '99999999999999999999', ''])]); break;
        case 'twice': headers.push([name, String(body.length)], [name, String(body.length + 1)]); break;
      }
      const nl = rng.chance(0.9) ? '\r\n' : '\n';
      const head = `${verb} ${token}${nl}${headers.map(([k, v]) => `${k}: ${v}${nl}`).join('')}${nl}`;
      let bytes: Buffer = Buffer.concat([Buffer.from(head, 'latin1'), body]);
      if (rng.chance(0.3)) {
        notes.add('bytes');
        bytes = byteMutate(rng, bytes);
      }
      return { bytes, port: 'scan', note: notes.toString() };
    },
  };
}
