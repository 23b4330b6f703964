// HTTPCrypt envelopes: validly sealed requests to the fuzz server's fixed
// keypair, then mutated where a decrypting server must be careful: the Key header (short id,
// client public key, low-order points, no `=`, repeated), the nonce, the MAC, the ciphertext,
// a body too short for nonce + MAC, and validly sealed inner requests that are themselves
// malformed (inner request line, headers, Content-Length, trailing bytes).
import { base32Encode } from '../../../src/core/base32.js';
import { seal } from '../../../src/crypto/cryptobox.js';
import { keyId } from '../../../src/crypto/keypair.js';
import { formatKeyHeader } from '../../../src/http/crypt/key-header.js';
import { serializeInnerRequest } from '../../../src/http/crypt/envelope.js';
import { byteMutate, flip, mutateString } from '../mutate.js';
import { request, serialize } from '../http.js';
import { fuzzServerKeypair, READ_PASSWORD } from '../server.js';
import { publicKeyOf, sharedKeyFor } from '../x25519.js';
import { baseScanRequest, mutateScanRequest } from './v2.js';
import { Notes, scanExpected5xx, type FuzzInput, type Port, type Surface, type SurfaceContext } from '../surface.js';
import type { Rng } from '../rng.js';

/** Public keys of small order on Curve25519: X25519 with them gives an all-zero secret. */
const LOW_ORDER = [
  Buffer.alloc(32),
  Buffer.from('0100000000000000000000000000000000000000000000000000000000000000', 'hex'),
  Buffer.from('e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800', 'hex'),
  Buffer.from('ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', 'hex'),
];

function clientKeypair(rng: Rng): { secretKey: Uint8Array; publicKey: Uint8Array } {
  const sk = new Uint8Array(rng.bytes(32));
  sk[0]! &= 248;
  sk[31]! &= 127;
  sk[31]! |= 64;
  return { secretKey: sk, publicKey: publicKeyOf(sk) };
}

export function httpcryptSurface(ctx: SurfaceContext): Surface {
  const server = fuzzServerKeypair();
  const serverId = keyId(server.publicKey);
  const sharedWithServer = sharedKeyFor(server.publicKey);
  return {
    name: 'httpcrypt',
    keepAlive: true,
    expected5xx: scanExpected5xx,
    generate(rng: Rng): FuzzInput {
      const notes = new Notes();
      const port: Port = rng.chance(0.15) ? 'controller' : 'scan';
      // The inner request: valid most of the time, so the inner parser and the scan are reached.
      let inner: Buffer;
      if (port === 'controller') {
        notes.add('controller');
        inner = serializeInnerRequest({ path: rng.pick(['/stat', '/ping', '/actions', '/auth', '/errors']), headers: [['Password', READ_PASSWORD]], body: new Uint8Array() });
      } else if (rng.chance(0.6)) {
        notes.add('inner-valid');
        inner = serializeInnerRequest({ path: rng.pick(['/checkv2', '/checkv2', '/ping', '/symbols']), headers: [['IP', '192.0.2.1']], body: rng.pick(ctx.seeds.small) });
      } else {
        notes.add('inner-mutated');
        const r = baseScanRequest(rng, ctx, notes);
        mutateScanRequest(rng, r, notes);
        inner = serialize(r);
        if (rng.chance(0.2)) inner = byteMutate(rng, inner);
      }
      const client = clientKeypair(rng);
      const nm = sharedWithServer(client.secretKey);
      let box = seal(nm, inner, new Uint8Array(rng.bytes(24)));
      let key = formatKeyHeader(serverId, client.publicKey);
      let outerPath = '/post';
      const extraHeaders: Array<[string, string]> = [];
      for (let n = rng.chance(0.4) ? 0 : rng.count(3); n > 0; n--) {
        const what = rng.weighted<string>([[2, 'nonce'], [2, 'mac'], [2, 'ciphertext'], [1, 'short'], [2, 'key-id'], [2, 'key-peer'], [1, 'low-order'], [1, 'key-text'], [1, 'two-keys'], [1, 'path'], [1, 'no-key']]);
        notes.add(what);
        switch (what) {
          case 'nonce': box = Buffer.concat([flip(rng, box.subarray(0, 24)), box.subarray(24)]); break;
          case 'mac': box = Buffer.concat([box.subarray(0, 24), flip(rng, box.subarray(24, 40)), box.subarray(40)]); break;
          case 'ciphertext': box = Buffer.concat([box.subarray(0, 40), byteMutate(rng, box.subarray(40))]); break;
          case 'short': box = box.subarray(0, rng.int(41)); break;
          case 'key-id': key = `${base32Encode(flip(rng, Buffer.from(serverId.subarray(0, 5))))}=${key.split('=')[1]}`; break;
          case 'key-peer': key = `${key.split('=')[0]}=${base32Encode(flip(rng, Buffer.from(client.publicKey)))}`; break;
          case 'low-order': key = `${key.split('=')[0]}=${base32Encode(rng.pick(LOW_ORDER))}`; break;
          case 'key-text': key = mutateString(rng, key); break;
          case 'two-keys': extraHeaders.push(['Key', formatKeyHeader(serverId, clientKeypair(rng).publicKey)]); break;
          case 'path': outerPath = rng.pick(['/checkv2', '/ping', '/', '/post?x=1', '/POST']); break;
          default: key = key.replace('=', '');
        }
      }
      const headers: Array<[string, string]> = [['Content-Type', 'application/octet-stream'], ['Key', key], ...extraHeaders];
      if (rng.chance(0.5)) headers.unshift(['Connection', rng.chance(0.5) ? 'close' : 'keep-alive']);
      const r = request('POST', outerPath, headers, box);
      r.version = rng.chance(0.5) ? 'HTTP/1.0' : 'HTTP/1.1';
      return { bytes: serialize(r), port, note: notes.toString() };
    },
  };
}
