// Whole milter sessions against the proxy worker in milter mode: the MTA
// sessions recorded in fixtures/milter (a real Postfix and a Postfix-like client) and corpus
// messages wrapped in a Postfix session, mutated as frames: wrong lengths (0, off by a few, a
// 100 MB body chunk declared with a little sent), unknown command letters, macros and headers
// without their NULs, floods past the session caps (macros, headers, recipients), long bodies
// in many chunks, sessions that never send EOB or QUIT, ABORT / QUIT_NC / whole transactions
// interleaved, odd OPTNEG and CONNECT, payload and byte mutations. Most sessions end with QUIT
// so the server closes them itself; the others are half-closed by the sender (milter-wire.ts).
import { byteMutate, MAX_INPUT_BYTES, mutateString } from '../mutate.js';
import { frame, splitFrames, VALID_COMMANDS, type Frame } from '../milter-wire.js';
import { Notes, type FuzzInput, type Surface, type SurfaceContext } from '../surface.js';
import type { Rng } from '../rng.js';

/** One frame of a session being built; `declared` overrides the length field (a lie). */
interface Item {
  cmd: string;
  data: Buffer;
  declared?: number;
}

/** Above the server's caps (options.ts: 512 macros, 10 000 headers and recipients). */
const MACRO_FLOOD = 600;
const HEADER_FLOOD = 10_050;
const RCPT_FLOOD = 10_050;
/** The largest body chunk an MTA sends (libmilter's MILTER_CHUNK_SIZE). */
const CHUNK = 65_535;
/** Declared length of the "huge" frames: 100 MB, of which only a little is sent. */
const HUGE_DECLARED = 100 * 1024 * 1024;
/** Transactions repeated in one session at most (each is a scan). */
const MAX_REPEATS = 4;

const PORT_41234 = Buffer.from([0xa0, 0x52]);

/** A Postfix session around `msg`: headers as HEADER frames (folded values kept), body in chunks. */
function wrapMessage(rng: Rng, msg: Buffer): Item[] {
  const text = msg.toString('latin1');
  const sep = /\r?\n\r?\n/.exec(text);
  const headText = sep ? text.slice(0, sep.index) : text;
  const body = sep ? msg.subarray(sep.index + sep[0].length) : Buffer.alloc(0);
  const items: Item[] = [
    { cmd: 'O', data: Buffer.from([0, 0, 0, 6, 0, 0, 1, 0xff, 0, 0x1f, 0xff, 0xff]) },
    { cmd: 'D', data: Buffer.from('Cj\0mx.test\0{daemon_name}\0smtpd\0v\0Postfix 3.7.11\0', 'latin1') },
    { cmd: 'C', data: Buffer.concat([Buffer.from('mail.example.org\x004', 'latin1'), PORT_41234, Buffer.from('192.0.2.10\0')]) },
    { cmd: 'H', data: Buffer.from('mail.example.org\0') },
    { cmd: 'D', data: Buffer.from('Mi\0QID1\0', 'latin1') },
    { cmd: 'M', data: Buffer.from('<alice@example.org>\0SIZE=512\0') },
    { cmd: 'R', data: Buffer.from('<bob@example.com>\0') },
    { cmd: 'T', data: Buffer.alloc(0) },
  ];
  for (const line of headText.split(/\r?\n(?![ \t])/)) {
    const c = line.indexOf(':');
    if (c <= 0) continue;
    items.push({ cmd: 'L', data: Buffer.from(`${line.slice(0, c)}\0${line.slice(c + 1).replace(/^ /, '').replace(/\r?\n/g, '\r\n')}\0`, 'latin1') });
  }
  items.push({ cmd: 'N', data: Buffer.alloc(0) });
  const chunk = rng.chance(0.8) ? CHUNK : rng.range(1, 200);
  for (let off = 0; off < body.length && off < MAX_INPUT_BYTES; off += chunk) items.push({ cmd: 'B', data: body.subarray(off, off + chunk) });
  items.push({ cmd: 'E', data: Buffer.alloc(0) }, { cmd: 'Q', data: Buffer.alloc(0) });
  return items;
}

function fromSeed(b: Buffer): Item[] | undefined {
  const { frames } = splitFrames(b);
  return frames.length ? frames.map((f: Frame) => ({ cmd: f.cmd, data: f.data })) : undefined;
}

/** Index range of the first message transaction (MAIL-stage macros or MAIL … EOB). */
function transactionRange(items: Item[]): [number, number] | undefined {
  const start = items.findIndex((f, i) => f.cmd === 'M' || (f.cmd === 'D' && f.data[0] === 0x4d && items[i + 1]?.cmd === 'M'));
  if (start < 0) return undefined;
  const end = items.findIndex((f, i) => i > start && f.cmd === 'E');
  return end < 0 ? undefined : [start, end + 1];
}

function indexOfCmd(rng: Rng, items: Item[], cmds: string): number | undefined {
  const at = items.map((f, i) => (cmds.includes(f.cmd) ? i : -1)).filter((i) => i >= 0);
  return at.length ? rng.pick(at) : undefined;
}

function nameValue(rng: Rng, n: number, prefix: string): Buffer {
  return Buffer.from(`${prefix}${n}-${rng.str(4)}\0v${n}\0`, 'latin1');
}

/** Bytes of the items, with declared lengths where one lies. */
function encode(items: Item[]): Buffer {
  const parts: Buffer[] = [];
  for (const it of items) {
    const f = frame(it.cmd, it.data);
    if (it.declared !== undefined) f.writeUInt32BE(it.declared >>> 0, 0);
    parts.push(f);
  }
  return Buffer.concat(parts);
}

function size(items: Item[]): number {
  let n = 0;
  for (const it of items) n += 5 + it.data.length;
  return n;
}

export function mutateSession(rng: Rng, items: Item[], notes: Notes, others: Buffer[]): { items: Item[]; quit: boolean } {
  let quit = true;
  for (let n = rng.count(4); n > 0; n--) {
    // Mutations that drop frames can leave none: start again from an OPTNEG alone.
    if (items.length === 0) items.push({ cmd: 'O', data: Buffer.from([0, 0, 0, 6, 0, 0, 1, 0xff, 0, 0x1f, 0xff, 0xff]) });
    const what = rng.weighted<string>([
      [3, 'length'], [2, 'zero-length'], [2, 'huge-declared'], [3, 'unknown-cmd'], [3, 'macro-no-nul'], [1, 'macro-flood'], [3, 'header-no-nul'],
      [1, 'header-flood'], [1, 'rcpt-flood'], [2, 'big-body'], [3, 'drop-eob'], [2, 'drop-quit'], [3, 'abort'], [2, 'quit-nc'], [2, 'repeat-transaction'],
      [2, 'dup'], [2, 'swap'], [2, 'drop'], [2, 'optneg'], [2, 'connect'], [2, 'eob-payload'], [5, 'payload'], [1, 'splice'], [1, 'empty-eob'],
    ]);
    notes.add(what);
    switch (what) {
      case 'length': {
        const i = rng.int(items.length);
        const it = items[i]!;
        it.declared = Math.max(0, it.data.length + 1 + rng.pick([-2, -1, 1, 2, 5, 100, 4096, -it.data.length]));
        break;
      }
      case 'zero-length': items.splice(rng.int(items.length + 1), 0, { cmd: rng.pick([...VALID_COMMANDS]), data: Buffer.alloc(0), declared: 0 }); break;
      case 'huge-declared': {
        // A body chunk announced at up to 100 MB; only a few KB of it are sent.
        const declared = rng.pick([HUGE_DECLARED, 0xffffffff, 2 * 64 * 1024 + 2, 2 * 64 * 1024 + 1, 1 << 24]);
        items.splice(rng.int(items.length + 1), 0, { cmd: 'B', data: Buffer.alloc(rng.range(0, 8192), 0x61), declared });
        break;
      }
      case 'unknown-cmd': {
        const letter = String.fromCharCode(rng.chance(0.5) ? rng.pick([0x00, 0x50, 0x53, 0x58, 0x61, 0x6f, 0x7f, 0xff, 0x20, 0x0a]) : rng.int(256));
        if (rng.chance(0.5) && items.length) items[rng.int(items.length)]!.cmd = letter;
        else items.splice(rng.int(items.length + 1), 0, { cmd: letter, data: rng.bytes(rng.int(16)) });
        break;
      }
      case 'macro-no-nul': {
        const i = indexOfCmd(rng, items, 'D');
        if (i === undefined) break;
        const d = items[i]!.data;
        // Drop the last NUL (value unterminated) or the first (name unterminated too).
        const at = rng.chance(0.5) ? d.lastIndexOf(0) : d.indexOf(0);
        if (at >= 0) items[i]!.data = Buffer.concat([d.subarray(0, at), d.subarray(at + 1)]);
        break;
      }
      case 'macro-flood': {
        const per = rng.range(1, 200);
        for (let m = 0; m < MACRO_FLOOD; m += per) {
          const pairs: Buffer[] = [Buffer.from(rng.pick(['C', 'M', 'R', 'E']))];
          for (let k = m; k < m + per; k++) pairs.push(nameValue(rng, k, '{x'));
          items.splice(Math.min(4, items.length), 0, { cmd: 'D', data: Buffer.concat(pairs) });
        }
        break;
      }
      case 'header-no-nul': {
        const i = indexOfCmd(rng, items, 'L');
        if (i === undefined) break;
        const d = items[i]!.data;
        items[i]!.data = rng.chance(0.5) ? d.subarray(0, d.length - 1) : Buffer.from(d.toString('latin1').replace(/\0/g, ''), 'latin1');
        break;
      }
      case 'header-flood': {
        const at = indexOfCmd(rng, items, 'N') ?? items.length;
        const flood: Item[] = [];
        for (let k = 0; k < HEADER_FLOOD; k++) flood.push({ cmd: 'L', data: Buffer.from(rng.chance(0.9) ? 'X-A\0b\0' : `X-${k}\0${k}\0`, 'latin1') });
        items.splice(at, 0, ...flood);
        break;
      }
      case 'rcpt-flood': {
        const at = indexOfCmd(rng, items, 'R') ?? items.length;
        const flood: Item[] = [];
        for (let k = 0; k < RCPT_FLOOD; k++) flood.push({ cmd: 'R', data: Buffer.from(`<r${k}@example.com>\0`) });
        items.splice(at, 0, ...flood);
        break;
      }
      case 'big-body': {
        const at = indexOfCmd(rng, items, 'E') ?? items.length;
        const room = Math.max(0, MAX_INPUT_BYTES - size(items));
        const total = Math.min(room, rng.pick([CHUNK * 2, 1024 * 1024, 4 * 1024 * 1024, 7 * 1024 * 1024]));
        const line = Buffer.from('a long line of body text that goes on and on\r\n');
        const block = Buffer.alloc(CHUNK);
        for (let o = 0; o < CHUNK; o += line.length) line.copy(block, o);
        const body: Item[] = [];
        for (let o = 0; o + CHUNK <= total; o += CHUNK) body.push({ cmd: 'B', data: block });
        items.splice(at, 0, ...body);
        break;
      }
      case 'drop-eob': for (let i = items.length - 1; i >= 0; i--) if (items[i]!.cmd === 'E') { items.splice(i, 1); break; } break;
      case 'drop-quit':
        quit = false;
        for (let i = items.length - 1; i >= 0; i--) if (items[i]!.cmd === 'Q') items.splice(i, 1);
        break;
      case 'abort': items.splice(rng.int(items.length + 1), 0, { cmd: 'A', data: Buffer.alloc(0) }); break;
      case 'quit-nc': {
        const at = rng.int(items.length + 1);
        const reconnect = items.filter((f) => f.cmd === 'C' || f.cmd === 'H').map((f) => ({ cmd: f.cmd, data: f.data }));
        items.splice(at, 0, { cmd: 'K', data: Buffer.alloc(0) }, ...(rng.chance(0.7) ? reconnect : []));
        break;
      }
      case 'repeat-transaction': {
        const r = transactionRange(items);
        if (!r) break;
        const copy = items.slice(r[0], r[1]).map((f) => ({ cmd: f.cmd, data: f.data }));
        for (let k = rng.range(1, MAX_REPEATS); k > 0 && size(items) + size(copy) < MAX_INPUT_BYTES; k--) items.splice(r[1], 0, ...copy.map((f) => ({ ...f })));
        break;
      }
      case 'dup': {
        const i = rng.int(items.length);
        const len = Math.min(items.length - i, rng.count(20));
        items.splice(rng.int(items.length + 1), 0, ...items.slice(i, i + len).map((f) => ({ cmd: f.cmd, data: f.data })));
        break;
      }
      case 'swap': {
        if (items.length < 2) break;
        const a = rng.int(items.length);
        const b = rng.int(items.length);
        [items[a], items[b]] = [items[b]!, items[a]!];
        break;
      }
      case 'drop': if (items.length) items.splice(rng.int(items.length), rng.count(3)); break;
      case 'optneg': {
        const d = Buffer.alloc(12);
        d.writeUInt32BE(rng.pick([6, 2, 0, 5, 7, 0xffffffff]), 0);
        d.writeUInt32BE(rng.pick([0x1ff, 0, 0x3f, 0xffffffff]), 4);
        d.writeUInt32BE(rng.pick([0x1fffff, 0, 0xff080, 0x3f, 0xffffffff]), 8);
        const data = rng.chance(0.2) ? d.subarray(0, rng.int(12)) : d;
        const i = items.findIndex((f) => f.cmd === 'O');
        if (i >= 0 && rng.chance(0.6)) items[i] = { cmd: 'O', data };
        else items.splice(rng.int(items.length + 1), 0, { cmd: 'O', data });
        break;
      }
      case 'connect': {
        const family = rng.pick(['4', '6', 'L', 'U', 'X', '']);
        const addr = rng.pick(['192.0.2.10', 'IPv6:2001:db8::25', '[::1]', '::ffff:1.2.3.4', 'fe80::1%eth0', '/var/run/x.sock', 'garbage', '', '999.1.1.1', '1.2.3.4\0extra']);
        const host = rng.chance(0.8) ? rng.pick(['mail.example.org', 'unknown', '', '[1.2.3.4]']) : mutateString(rng, 'mail.example.org');
        const data = Buffer.concat([Buffer.from(`${host}\0${family}`, 'latin1'), rng.chance(0.9) ? PORT_41234 : Buffer.alloc(rng.int(2)), Buffer.from(rng.chance(0.9) ? `${addr}\0` : addr, 'latin1')]);
        const i = items.findIndex((f) => f.cmd === 'C');
        if (i >= 0) items[i] = { cmd: 'C', data };
        else items.splice(1, 0, { cmd: 'C', data });
        break;
      }
      case 'eob-payload': {
        const i = indexOfCmd(rng, items, 'E');
        if (i !== undefined) items[i]!.data = Buffer.from(rng.chance(0.5) ? 'final chunk\r\n' : 'XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X\r\n');
        break;
      }
      case 'payload': {
        if (!items.length) break;
        const it = items[rng.int(items.length)]!;
        it.data = rng.chance(0.5) ? Buffer.from(mutateString(rng, it.data.toString('latin1')), 'latin1') : byteMutate(rng, it.data);
        if (it.data.length > 2 * 64 * 1024) it.data = it.data.subarray(0, rng.chance(0.5) ? 2 * 64 * 1024 : 2 * 64 * 1024 + 1);
        break;
      }
      case 'splice': {
        const other = others.length ? fromSeed(rng.pick(others)) : undefined;
        if (!other) break;
        const from = rng.int(other.length);
        items.splice(rng.int(items.length + 1), rng.int(3), ...other.slice(from, from + rng.count(other.length - from)));
        break;
      }
      case 'empty-eob': {
        // EOB with no message data since the last reset (Rspamd closes; we answer).
        const r = transactionRange(items);
        if (r) items.splice(r[0], r[1] - r[0], { cmd: 'E', data: Buffer.alloc(0) });
        break;
      }
    }
  }
  return { items, quit };
}

export function milterSurface(ctx: SurfaceContext): Surface {
  const sessions = ctx.seeds.milterSessions;
  return {
    name: 'milter',
    keepAlive: false,
    proxyMode: 'milter',
    // Milter replies are frames, not HTTP: no status to judge.
    expected5xx: () => true,
    generate(rng: Rng): FuzzInput {
      const notes = new Notes();
      const useSeed = sessions.length > 0 && rng.chance(0.7);
      let items: Item[] | undefined;
      let raw: Buffer | undefined;
      if (useSeed) {
        const i = rng.int(sessions.length);
        items = fromSeed(sessions[i]!);
        notes.add(`fixture-session#${i}`);
        // The HTTP ping on the milter port is not frames: it gets byte mutations only.
        if (!items) raw = sessions[i]!;
      } else {
        items = wrapMessage(rng, rng.pick(ctx.seeds.small));
        notes.add('wrapped-message');
      }
      let bytes: Buffer;
      if (items) {
        const m = rng.chance(0.9) ? mutateSession(rng, items, notes, sessions) : { items, quit: true };
        if (m.quit && m.items[m.items.length - 1]?.cmd !== 'Q' && rng.chance(0.85)) m.items.push({ cmd: 'Q', data: Buffer.alloc(0) });
        if (!m.quit || !m.items.some((f) => f.cmd === 'Q')) notes.add('no-quit');
        bytes = encode(m.items);
      } else {
        bytes = raw!;
      }
      if (rng.chance(0.08) || raw) {
        notes.add('bytes');
        bytes = byteMutate(rng, bytes, sessions);
      }
      return { bytes, port: 'milter', note: notes.toString() };
    },
  };
}
