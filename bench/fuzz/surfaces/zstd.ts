// zstd-compressed request bodies (`Compression: zstd`, `Content-Encoding: zstd`, the zstd
// flag; with and without the server's input dictionary), and mutated frames: the frame header
// (window size, content size, dictionary id, checksum flag), block headers (type, size, last
// flag), RLE bombs, skippable frames, concatenated and truncated frames.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { zstdCompress } from '../../../src/http/zstd.js';
import { byteMutate, flip } from '../mutate.js';
import { request, serialize } from '../http.js';
import { DICTIONARY_ID } from '../server.js';
import { protocolValue } from '../values.js';
import { Notes, scanExpected5xx, type FuzzInput, type Surface, type SurfaceContext } from '../surface.js';
import type { Rng } from '../rng.js';

const MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);
/** Largest block a zstd frame may hold (128 KiB). */
const MAX_BLOCK = 128 * 1024;
/** RLE blocks in the largest bomb: 500 × 128 KiB = 64 MiB out of 2 KB in, past the 50 MB body limit. */
const MAX_RLE_BLOCKS = 500;

function blockHeader(size: number, type: number, last: boolean): Buffer {
  const v = (size << 3) | (type << 1) | (last ? 1 : 0);
  return Buffer.from([v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff]);
}

/** A hand-built frame of RLE blocks: tiny input, `blocks` × 128 KiB of output. */
function rleBomb(rng: Rng, blocks: number): Buffer {
  const parts: Buffer[] = [MAGIC, Buffer.from([0x00, 0x38])]; // no content size, window 128 KiB
  for (let i = 0; i < blocks; i++) parts.push(blockHeader(MAX_BLOCK, 1, i === blocks - 1), Buffer.from([rng.int(256)]));
  return Buffer.concat(parts);
}

/** Mutates the frame header of a compressed frame (after the magic). */
function mutateFrameHeader(rng: Rng, frame: Buffer, notes: Notes): Buffer {
  const f = Buffer.from(frame);
  if (f.length < 6) return f;
  switch (rng.int(6)) {
    case 0: notes.add('fhd'); f[4] = rng.int(256); break;
    case 1: notes.add('window'); f[5] = rng.pick([0xf8, 0xff, 0x00, 0x88, 0xa8]); break; // window up to 2^41
    case 2: notes.add('fhd-fcs8'); f[4] = (f[4]! & 0x3f) | 0xc0; break; // claim an 8-byte content size
    case 3: notes.add('fhd-dictid'); f[4] = (f[4]! & 0xfc) | rng.range(1, 3); break;
    case 4: notes.add('fhd-checksum'); f[4] = f[4]! ^ 0x04; break;
    default: notes.add('fhd-reserved'); f[4] = f[4]! | 0x08; break;
  }
  return f;
}

export function zstdSurface(ctx: SurfaceContext, root: string): Surface {
  const dictionary = readFileSync(join(root, 'bench', 'fuzz', 'zstd.dict'));
  return {
    name: 'zstd',
    keepAlive: true,
    expected5xx: scanExpected5xx,
    generate(rng: Rng): FuzzInput {
      const notes = new Notes();
      const msg = rng.pick(ctx.seeds.small);
      const withDict = rng.chance(0.3);
      let body = zstdCompress(msg, withDict ? dictionary : undefined);
      if (withDict) notes.add('dict');
      switch (rng.weighted<string>([[3, 'valid'], [3, 'header'], [4, 'bytes'], [1, 'bomb'], [1, 'skippable'], [1, 'concat'], [1, 'truncate'], [1, 'plain'], [1, 'blocks']])) {
        case 'valid': notes.add('valid'); break;
        case 'header': body = mutateFrameHeader(rng, body, notes); break;
        case 'bytes': notes.add('bytes'); body = rng.chance(0.5) ? flip(rng, body) : byteMutate(rng, body); break;
        case 'bomb': { const n = rng.count(MAX_RLE_BLOCKS); notes.add(`rle-bomb:${n}`); body = rleBomb(rng, n); break; }
        case 'skippable': {
          notes.add('skippable');
          const size = rng.pick([0, 8, 0xffffffff, 0x7fffffff, 100]);
          const skip = Buffer.alloc(8);
          skip.writeUInt32LE(0x184d2a50 + rng.int(16), 0);
          skip.writeUInt32LE(size >>> 0, 4);
          body = Buffer.concat(rng.chance(0.5) ? [skip, rng.bytes(Math.min(size, 64)), body] : [body, skip]);
          break;
        }
        case 'concat': { const n = rng.count(200); notes.add(`concat:${n}`); body = Buffer.concat(Array.from({ length: n }, () => body)); break; }
        case 'truncate': notes.add('truncated'); body = body.subarray(0, rng.int(body.length)); break;
        case 'plain': notes.add('not-compressed'); body = msg; break;
        default: {
          // A frame with a block of each type, sizes from the mutator.
          notes.add('hand-blocks');
          const parts: Buffer[] = [MAGIC, Buffer.from([0x00, 0x38])];
          for (let n = rng.count(20); n > 0; n--) {
            const type = rng.int(4);
            const size = rng.pick([0, 1, 100, MAX_BLOCK, MAX_BLOCK + 1, 0x1fffff]);
            parts.push(blockHeader(size, type, n === 1), rng.bytes(type === 1 ? 1 : Math.min(size, 256)));
          }
          body = Buffer.concat(parts);
        }
      }
      const headers: Array<[string, string]> = [];
      switch (rng.int(5)) {
        case 0: headers.push(['Content-Encoding', 'zstd']); break;
        case 1: headers.push(['Flags', 'zstd']); break;
        default: headers.push(['Compression', rng.chance(0.95) ? 'zstd' : protocolValue(rng, 'compression')]);
      }
      if (withDict || rng.chance(0.05)) headers.push(['Dictionary', rng.chance(0.9) ? String(DICTIONARY_ID) : protocolValue(rng, 'dictionary')]);
      if (rng.chance(0.3)) headers.push(['Accept-Encoding', 'zstd']);
      if (rng.chance(0.2)) headers.push(['IP', protocolValue(rng, 'ip')]);
      return { bytes: serialize(request('POST', rng.chance(0.9) ? '/checkv2' : rng.pick(['/check', '/symbols', '/checkv3']), headers, body)), port: 'scan', note: notes.toString() };
    },
  };
}
