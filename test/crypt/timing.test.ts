// A refusal's timing must not say which check failed: a request for an unknown key id costs
// the server the same work (X25519, HChaCha20, Poly1305) as one with a bad MAC. Measured on
// the unwrap step itself, with fresh client keys so the shared-key cache never hits.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeypair } from '../../src/crypto/keypair.js';
import { sealRequest, serializeInnerRequest } from '../../src/http/crypt/envelope.js';
import { HttpCryptServer } from '../../src/http/crypt/server-crypt.js';
import { RequestParser, type ParsedRequest } from '../../src/http/request-parser.js';
import { loadKeypair } from './fixtures.js';

const LIMITS = { maxBodyBytes: 1 << 20, maxHeaderBytes: 1 << 16 };
/** Requests per kind: enough for a stable minimum on a busy 2-core machine, done in well under a second. */
const ROUNDS = 80;
/** The fastest times may differ by this factor at most; skipping the key exchange for unknown ids makes it >20. */
const MAX_RATIO = 2;

function parse(bytes: Buffer): ParsedRequest {
  const p = new RequestParser(LIMITS);
  p.feed(bytes);
  return p.next()!;
}

/**
 * The fastest run is the cost of the work itself: on a loaded machine most runs also contain
 * time the process spent descheduled, which says nothing about the code path.
 */
function fastest(xs: number[]): number {
  return Math.min(...xs);
}

it('unknown key id and bad MAC take the same time to refuse', (t) => {
  const server = loadKeypair('server-keypair.json');
  const other = loadKeypair('wrong-keypair.json');
  const crypt = new HttpCryptServer({ keypair: server });
  const inner = serializeInnerRequest({ path: '/checkv2', headers: [], body: Buffer.alloc(2000, 0x61) });
  const badMac: ParsedRequest[] = [];
  const unknownId: ParsedRequest[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const a = Buffer.from(sealRequest(inner, server.publicKey, { clientKeypair: generateKeypair() }).bytes);
    a[a.indexOf('\r\n\r\n') + 4 + 30]! ^= 1;
    badMac.push(parse(a));
    unknownId.push(parse(sealRequest(inner, other.publicKey, { clientKeypair: generateKeypair() }).bytes));
  }
  const time = (r: ParsedRequest, code: string): number => {
    const t0 = process.hrtime.bigint();
    const u = crypt.unwrap(r, '127.0.0.1', LIMITS);
    const dt = Number(process.hrtime.bigint() - t0);
    assert.equal(u.kind === 'rejected' && u.error.code, code);
    return dt;
  };
  // Warm up both paths, then interleave so machine load hits both kinds alike.
  time(badMac[0]!, 'ERR_CRYPT_BAD_MAC');
  time(unknownId[0]!, 'ERR_CRYPT_UNKNOWN_KEY');
  const tMac: number[] = [];
  const tId: number[] = [];
  for (let i = 1; i < ROUNDS; i++) {
    // Alternate which kind goes first, so a pause left behind by one never lands on one kind only.
    if (i % 2) {
      tMac.push(time(badMac[i]!, 'ERR_CRYPT_BAD_MAC'));
      tId.push(time(unknownId[i]!, 'ERR_CRYPT_UNKNOWN_KEY'));
    } else {
      tId.push(time(unknownId[i]!, 'ERR_CRYPT_UNKNOWN_KEY'));
      tMac.push(time(badMac[i]!, 'ERR_CRYPT_BAD_MAC'));
    }
  }
  const mMac = fastest(tMac);
  const mId = fastest(tId);
  const ratio = Math.max(mMac, mId) / Math.min(mMac, mId);
  t.diagnostic(`fastest refusal: bad MAC ${(mMac / 1e3).toFixed(0)} µs, unknown id ${(mId / 1e3).toFixed(0)} µs`);
  assert.ok(ratio < MAX_RATIO, `fastest bad MAC ${(mMac / 1e3).toFixed(0)} µs vs unknown id ${(mId / 1e3).toFixed(0)} µs`);
});
