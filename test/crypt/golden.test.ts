// Every HTTPCrypt capture from real rspamd/rspamc 3.4 opens with the spec's construction and
// re-seals byte for byte: requests (whole outer message, rebuilt from rspamc's dumped client
// secret), replies (body, and the outer head layout), and each error case is refused the way
// the server side must refuse it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { base32Decode, base32DecodeExact, base32Encode } from '../../src/core/base32.js';
import { open, seal, sharedKey, KEY_BYTES } from '../../src/crypto/cryptobox.js';
import { formatKeypair, keypairFromSecret, keyId } from '../../src/crypto/keypair.js';
import { sealRequest } from '../../src/http/crypt/envelope.js';
import { parseKeyHeader } from '../../src/http/crypt/key-header.js';
import { HttpCryptServer } from '../../src/http/crypt/server-crypt.js';
import { serializeReplyHead } from '../../src/http/reply.js';
import { RequestParser, type ParsedRequest } from '../../src/http/request-parser.js';
import { cases, DIR, file, hex, loadKeypair, split, unhex, type CryptCase } from './fixtures.js';

const LIMITS = { maxBodyBytes: 50 * 1024 * 1024, maxHeaderBytes: 64 * 1024 };
const server = loadKeypair('server-keypair.json');
const crypt = new HttpCryptServer({ keypair: server });

function parseOuter(bytes: Buffer): ParsedRequest {
  const p = new RequestParser(LIMITS);
  p.feed(bytes);
  const r = p.next();
  assert.ok(r, 'the captured request parses as one HTTP request');
  return r;
}

/** The client public key a case's `Key:` header carries. */
function clientPk(c: CryptCase): Uint8Array {
  const k = parseKeyHeader(c.key_header!);
  assert.ok(k?.peerKey);
  return k.peerKey;
}

describe('keys and base32', () => {
  it('encodes and decodes every base32 vector printed by rspamd', () => {
    const vectors = JSON.parse(readFileSync(join(DIR, 'base32-vectors.json'), 'utf8')) as Array<{ base32: string; input_hex: string; rspamd_decode_hex: string }>;
    assert.ok(vectors.length >= 14);
    for (const v of vectors) {
      assert.equal(base32Encode(unhex(v.input_hex)), v.base32, `encode ${v.input_hex}`);
      assert.equal(hex(base32Decode(v.base32)!), v.rspamd_decode_hex, `decode ${v.base32}`);
    }
  });

  it('takes 52 and 51 characters as a 32-byte key, refuses 53, upper case and foreign characters', () => {
    const pk = 'xz5576e54dae5q769z3hfnf5b51wf45peiykbfn84sg63hk3w6qy';
    assert.equal(base32DecodeExact(pk, KEY_BYTES)?.length, 32);
    assert.equal(base32DecodeExact(pk.slice(0, 51), KEY_BYTES)?.length, 32);
    assert.equal(base32DecodeExact(pk + 'y', KEY_BYTES), undefined);
    assert.equal(base32DecodeExact(pk.toUpperCase(), KEY_BYTES), undefined);
    for (const bad of ['0', '2', 'l', 'v', '=', ' ']) assert.equal(base32Decode(pk.slice(0, 10) + bad), undefined, bad);
  });

  it('loads the keypair files: base32 and hex forms agree, ids are BLAKE2b-512 of the public key', () => {
    const hexForm = loadKeypair('server-keypair.hex.json');
    assert.equal(hex(hexForm.secretKey), hex(server.secretKey));
    assert.equal(hex(hexForm.publicKey), hex(server.publicKey));
    const printed = JSON.parse(readFileSync(join(DIR, 'server-keypair.json'), 'utf8')) as { keypair: Record<string, string> };
    assert.equal(base32Encode(server.id), printed.keypair.id);
    assert.equal(base32Encode(server.id).slice(0, 8), 'iym66bmb');
    // X25519(privkey) is the pubkey, for every keypair rspamd printed.
    for (const f of ['server-keypair.json', 'wrong-keypair.json', 'node-client-keypair.json']) {
      const kp = loadKeypair(f);
      assert.equal(hex(keypairFromSecret(kp.secretKey).publicKey), hex(kp.publicKey), f);
    }
    // Printing gives rspamd's fields back (key order aside).
    assert.deepEqual(formatKeypair(server), { ...printed.keypair, type: 'kex', algorithm: 'curve25519', encoding: 'base32' });
    const hexPrinted = JSON.parse(readFileSync(join(DIR, 'server-keypair.hex.json'), 'utf8')) as { keypair: Record<string, string> };
    assert.deepEqual(formatKeypair(server, 'hex'), hexPrinted.keypair);
  });
});

describe('golden captures', () => {
  for (const c of cases.filter((x) => x.encrypted)) {
    it(c.name, () => {
      const request = file(c, 'request.bin')!;
      const innerReq = file(c, 'request.inner.bin');
      const { body } = split(request);
      const outer = parseOuter(request);
      const u = crypt.unwrap(outer, '127.0.0.1', LIMITS);

      if (c.peer_keypair) {
        // Encrypted to a key the server does not have: refused without a session (plaintext error)…
        assert.equal(u.kind, 'rejected');
        assert.equal(u.kind === 'rejected' && u.error.code, 'ERR_CRYPT_UNKNOWN_KEY');
        assert.equal(u.kind === 'rejected' && u.session, undefined);
        // …yet it is a valid message for that other key: the client side rebuilds it exactly.
        const wrong = loadKeypair(c.peer_keypair);
        const client = keypairFromSecret(unhex(c.client_sk_hex!));
        const nm = sharedKey(client.secretKey, wrong.publicKey)!;
        assert.equal(hex(nm), c.nm_hex);
        assert.ok(innerReq && open(nm, body)!.equals(innerReq));
        const rebuilt = sealRequest(innerReq, wrong.publicKey, { clientKeypair: client, nonce: body.subarray(0, 24) });
        assert.ok(rebuilt.bytes.equals(request), 'request rebuilt byte for byte');
        return;
      }

      const nm = sharedKey(server.secretKey, clientPk(c))!;
      if (c.nm_hex) assert.equal(hex(nm), c.nm_hex, 'nm from the server side equals the one dumped in the client');
      if (c.client_pk_hex) assert.equal(hex(clientPk(c)), c.client_pk_hex);

      if (c.mac_tampered) {
        assert.equal(u.kind === 'rejected' && u.error.code, 'ERR_CRYPT_BAD_MAC');
        assert.ok(u.kind === 'rejected' && u.session, 'the key was accepted: the error reply is sealed');
        const fixed = Buffer.from(body);
        fixed[24]! ^= 1; // the capture flipped bit 0 of body byte 24 (the first MAC byte)
        assert.ok(open(nm, fixed)!.equals(innerReq!), 'restoring the bit opens the intended request');
      } else if (body.length < 40) {
        assert.equal(u.kind === 'rejected' && u.error.code, 'ERR_CRYPT_SHORT_BODY');
        assert.ok(u.kind === 'rejected' && u.session);
      } else if (c.inner_parse_error) {
        assert.equal(u.kind === 'rejected' && u.error.code, 'ERR_CRYPT_BAD_INNER');
        assert.ok(u.kind === 'rejected' && u.session);
        assert.ok(open(nm, body), 'the MAC itself is fine');
      } else {
        assert.equal(u.kind, 'opened', JSON.stringify(u));
        const plain = open(nm, body)!;
        assert.ok(plain.equals(innerReq!), 'request.inner.bin');
        assert.ok(seal(nm, plain, body.subarray(0, 24)).equals(body), 'request re-sealed byte for byte');
        if (c.request_mac_hex) assert.equal(hex(body.subarray(24, 40)), c.request_mac_hex);
        // The opened request is the inner one, outer URL and headers gone.
        const inner = parseOuter(innerReq!);
        if (u.kind === 'opened') {
          assert.equal(u.inner.method, inner.method);
          assert.equal(u.inner.path, inner.path);
          assert.deepEqual(u.inner.headers.raw, inner.headers.raw);
          assert.ok(u.inner.body.equals(inner.body));
          assert.equal(u.inner.headers.first('key'), undefined);
          assert.equal(u.session.peerKey, c.key_header!.split('=')[1]);
        }
        if (c.client_sk_hex) {
          const client = keypairFromSecret(unhex(c.client_sk_hex));
          const rebuilt = sealRequest(plain, server.publicKey, { clientKeypair: client, nonce: body.subarray(0, 24) });
          assert.ok(rebuilt.bytes.equals(request), 'whole outer request rebuilt byte for byte');
        }
      }

      const response = file(c, 'response.bin');
      const innerResp = file(c, 'response.inner.bin');
      if (c.response_empty) assert.equal(response?.length, 0, 'rspamd closed without a reply');
      if (!response?.length || !innerResp || !c.response_nonce_hex) return;
      const r = split(response);
      assert.equal(hex(r.body.subarray(0, 24)), c.response_nonce_hex);
      assert.ok(open(nm, r.body)!.equals(innerResp), 'response.inner.bin');
      assert.ok(seal(nm, innerResp, r.body.subarray(0, 24)).equals(r.body), 'reply re-sealed byte for byte');
      // Our outer reply head has rspamd's exact layout (the date is whatever the clock says).
      const innerHead = split(innerResp).head;
      const date = /\r\nDate: ([^\r]*)\r\n/.exec(innerHead)![1]!;
      const ours = serializeReplyHead({ status: 200, contentType: 'application/octet-stream', body: '' }, r.body.length, false, 'rspamd/3.4');
      assert.equal(ours.replace(/\r\nDate: [^\r]*\r\n/, `\r\nDate: ${date}\r\n`), r.head);
    });
  }

  it('the plaintext reference capture has no Key header and is left alone', () => {
    const c = cases.find((x) => x.name === 'plain-checkv2')!;
    const u = crypt.unwrap(parseOuter(file(c, 'request.bin')!), '127.0.0.1', LIMITS);
    assert.equal(u.kind, 'plain');
  });

  it('the Key header short id is the first 8 characters of the printed id', () => {
    for (const c of cases.filter((x) => x.key_header && !x.peer_keypair)) {
      assert.equal(c.key_header!.slice(0, 8), base32Encode(keyId(server.publicKey)).slice(0, 8));
    }
  });
});
