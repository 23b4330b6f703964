// MIME messages: seeds from the fixtures and the development corpus, mutated with structure
// (headers of every kind the modules parse, MIME trees, HTML, URLs, archives) and as bytes
// (flip, insert, delete, splice, a chunk repeated many times), sent to /checkv2 with an
// envelope so every module runs.
import { byteMutate, MAX_INPUT_BYTES, mutateString, repeatChunk } from '../mutate.js';
import { request, serialize } from '../http.js';
import { address, hostname, ipv4 } from '../values.js';
import { arcSet, bin, generatedHeader, received } from './mime-headers.js';
import { html, mimeTree, setMessageMutator, textWithUrls } from './mime-body.js';
import { Notes, scanExpected5xx, type FuzzInput, type Surface, type SurfaceContext } from '../surface.js';
import type { Rng } from '../rng.js';

/** Most copies of one header a duplication makes (signature floods, Received chains). */
const MAX_DUPLICATES = 5_000;

interface Message {
  /** [name, raw value after the colon, folding kept]: binary (latin1) strings. */
  headers: Array<[string, string]>;
  eol: string;
  body: string;
}

export function parseMessage(bytes: Buffer): Message {
  const text = bytes.toString('latin1');
  let end = text.indexOf('\r\n\r\n');
  let sep = 4;
  const lf = text.indexOf('\n\n');
  if (end < 0 || (lf >= 0 && lf < end)) { end = lf; sep = 2; }
  if (end < 0) return { headers: [], eol: '\r\n', body: text };
  const eol = sep === 4 ? '\r\n' : '\n';
  const headers: Array<[string, string]> = [];
  for (const line of text.slice(0, end).split(eol)) {
    if ((line.startsWith(' ') || line.startsWith('\t')) && headers.length) {
      headers[headers.length - 1]![1] += eol + line;
      continue;
    }
    const c = line.indexOf(':');
    if (c > 0) headers.push([line.slice(0, c), line.slice(c + 1)]);
    else headers.push([line, '']); // a broken line is kept as a header without value
  }
  return { headers, eol, body: text.slice(end + sep) };
}

export function serializeMessage(m: Message): Buffer {
  const head = m.headers.map(([n, v]) => `${n}:${v}${m.eol}`).join('');
  return Buffer.from(`${head}${m.eol}${m.body}`, 'latin1');
}

function headerIndex(m: Message, rng: Rng, wanted?: RegExp): number {
  const idx = m.headers.map((h, i) => [h, i] as const).filter(([h]) => !wanted || wanted.test(h[0])).map(([, i]) => i);
  return idx.length ? rng.pick(idx) : -1;
}

function mutateStructure(rng: Rng, m: Message, messages: readonly Buffer[], notes: Notes, depth: number): void {
  for (let n = rng.count(4); n > 0; n--) {
    const what = rng.weighted<string>([[6, 'insert'], [2, 'dup'], [3, 'value'], [1, 'delete'], [1, 'fold'], [2, 'mime'], [1, 'html'], [1, 'urls'], [1, 'arc-chain'], [1, 'received-chain'], [1, 'body-text']]);
    notes.add(what);
    switch (what) {
      case 'insert': {
        const hs = generatedHeader(rng).map(([k, v]): [string, string] => [k, ` ${bin(v)}`]);
        if (!rng.spend(hs.reduce((a, [k, v]) => a + k.length + v.length, 0))) break;
        m.headers.splice(rng.chance(0.5) ? 0 : rng.int(m.headers.length + 1), 0, ...hs);
        notes.add(hs[0]![0]);
        break;
      }
      case 'dup': {
        const i = headerIndex(m, rng, rng.chance(0.5) ? /^(received|dkim-signature|arc-|from|to|cc|subject|content-type|message-id)/i : undefined);
        if (i < 0) break;
        const size = m.headers[i]![0].length + m.headers[i]![1].length + 2;
        const copies = Math.min(rng.count(MAX_DUPLICATES), Math.floor(MAX_INPUT_BYTES / size));
        if (copies < 1 || !rng.spend(copies * size)) break;
        notes.add(`${m.headers[i]![0]}x${copies}`);
        m.headers.splice(i, 0, ...Array.from({ length: copies }, () => [m.headers[i]![0], m.headers[i]![1]] as [string, string]));
        break;
      }
      case 'value': {
        const i = headerIndex(m, rng);
        if (i >= 0) m.headers[i] = [m.headers[i]![0], bin(mutateString(rng, m.headers[i]![1]))];
        break;
      }
      case 'delete': { const i = headerIndex(m, rng); if (i >= 0) m.headers.splice(i, 1); break; }
      case 'fold': {
        const i = headerIndex(m, rng);
        if (i >= 0) m.headers[i] = [m.headers[i]![0], m.headers[i]![1].replace(/ /g, () => (rng.chance(0.3) ? rng.pick([`${m.eol} `, `${m.eol}\t`, `${m.eol}${m.eol} `, '\r ', '\n ']) : ' '))];
        break;
      }
      case 'mime': {
        const t = mimeTree(rng, messages, 0);
        m.headers = m.headers.filter(([k]) => !/^content-(type|transfer-encoding)$/i.test(k.trim()));
        m.headers.push(['MIME-Version', ' 1.0'], ['Content-Type', ` ${t.contentType}`], ...t.headers.map((h): [string, string] => [h.slice(0, h.indexOf(':')), h.slice(h.indexOf(':') + 1)]));
        m.body = t.body;
        break;
      }
      case 'html': {
        m.headers = m.headers.filter(([k]) => !/^content-(type|transfer-encoding)$/i.test(k.trim()));
        m.headers.push(['Content-Type', ' text/html; charset=utf-8']);
        m.body = bin(html(rng));
        break;
      }
      case 'urls': { const at = rng.int(m.body.length + 1); m.body = m.body.slice(0, at) + bin(textWithUrls(rng)) + m.body.slice(at); break; }
      case 'arc-chain': {
        const n = rng.count(60);
        notes.add(`arc-sets:${n}`);
        for (let i = n; i >= 1; i--) m.headers.unshift(...arcSet(rng, i).map(([k, v]): [string, string] => [k, ` ${bin(v)}`]));
        break;
      }
      case 'received-chain': {
        const n = rng.count(MAX_DUPLICATES);
        notes.add(`received:${n}`);
        const chain: Array<[string, string]> = [];
        for (let i = 0; i < n; i++) {
          const v = ` ${bin(received(rng))}`;
          if (!rng.spend(v.length)) break;
          chain.push(['Received', v]);
        }
        m.headers.unshift(...chain);
        break;
      }
      default: m.body = bin(mutateString(rng, m.body.slice(0, 20_000)));
    }
  }
  void depth;
}

function mutateMessage(rng: Rng, messages: readonly Buffer[], notes: Notes, depth = 0): Buffer {
  const seed = rng.pick(messages);
  let out: Buffer;
  const mode = rng.weighted<string>([[6, 'structure'], [2, 'bytes'], [1, 'both'], [1, 'repeat']]);
  notes.add(mode);
  if (mode === 'bytes') out = byteMutate(rng, seed, messages);
  else if (mode === 'repeat') out = repeatChunk(rng, seed);
  else {
    const m = parseMessage(seed);
    mutateStructure(rng, m, messages, notes, depth);
    out = serializeMessage(m);
    if (mode === 'both') out = byteMutate(rng, out, messages);
  }
  return out.length > MAX_INPUT_BYTES ? seed : out;
}

setMessageMutator((rng, messages, depth) => mutateMessage(rng, messages, new Notes(), depth).toString('latin1'));

export function mimeSurface(ctx: SurfaceContext): Surface {
  return {
    name: 'mime',
    keepAlive: true,
    expected5xx: scanExpected5xx,
    generate(rng: Rng): FuzzInput {
      const notes = new Notes();
      const msg = mutateMessage(rng, ctx.seeds.messages, notes);
      const headers: Array<[string, string]> = [['IP', ipv4(rng)], ['From', address(rng)], ['Rcpt', address(rng)], ['Helo', hostname(rng)]];
      if (rng.chance(0.3)) headers.push(['Hostname', hostname(rng)]);
      if (rng.chance(0.1)) headers.push(['User', address(rng)]);
      return { bytes: serialize(request('POST', '/checkv2', headers, msg)), port: 'scan', note: notes.toString() };
    },
  };
}
