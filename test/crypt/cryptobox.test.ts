// The primitives on their own: HChaCha20 against the XChaCha draft's vector, the shared key
// from both sides, the box refusing any flipped bit, how it differs from the IETF AEAD, the
// Key header grammar and which peers count as local for encrypted_only.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { base32Encode } from '../../src/core/base32.js';
import { hchacha20, open, seal, sharedKey, BOX_OVERHEAD } from '../../src/crypto/cryptobox.js';
import { generateKeypair, keyId, keypairFromSecret } from '../../src/crypto/keypair.js';
import { x25519SharedSecret } from '../../src/crypto/x25519.js';
import { formatKeyHeader, parseKeyHeader } from '../../src/http/crypt/key-header.js';
import { isLocalPeer } from '../../src/http/crypt/local-peer.js';
import { hex, unhex } from './fixtures.js';

describe('cryptobox', () => {
  it('HChaCha20 matches draft-irtf-cfrg-xchacha §2.2.1', () => {
    const key = unhex('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f');
    const input = unhex('000000090000004a0000000031415927');
    assert.equal(hex(hchacha20(key, input)), '82413b4227b27bfed30e42508a877d73a0f9e4d58a74a853c12ec41326d3ecdc');
  });

  it('X25519 matches RFC 7748 §6.1 (public keys and the shared secret of Alice and Bob)', () => {
    const alice = keypairFromSecret(unhex('77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a'));
    const bob = keypairFromSecret(unhex('5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb'));
    assert.equal(hex(alice.publicKey), '8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a');
    assert.equal(hex(bob.publicKey), 'de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f');
    const shared = '4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742';
    assert.equal(hex(x25519SharedSecret(alice.secretKey, bob.publicKey)), shared);
    assert.equal(hex(x25519SharedSecret(bob.secretKey, alice.publicKey)), shared);
    assert.equal(hex(sharedKey(alice.secretKey, bob.publicKey)!), hex(hchacha20(unhex(shared), new Uint8Array(16))));
  });

  it('both sides derive the same shared key; low-order peer keys are refused', () => {
    const a = generateKeypair();
    const b = generateKeypair();
    assert.equal(hex(sharedKey(a.secretKey, b.publicKey)!), hex(sharedKey(b.secretKey, a.publicKey)!));
    assert.equal(sharedKey(a.secretKey, new Uint8Array(32)), undefined);
    const one = new Uint8Array(32);
    one[0] = 1;
    assert.equal(sharedKey(a.secretKey, one), undefined);
  });

  it('opens what it seals and refuses every flipped bit of nonce, MAC or ciphertext', () => {
    const nm = sharedKey(generateKeypair().secretKey, generateKeypair().publicKey)!;
    const box = seal(nm, Buffer.from('GET /stat HTTP/1.0\r\n\r\n'));
    assert.equal(open(nm, box)!.toString(), 'GET /stat HTTP/1.0\r\n\r\n');
    for (let i = 0; i < box.length; i++) {
      const t = Buffer.from(box);
      t[i]! ^= 1 << (i % 8);
      assert.equal(open(nm, t), undefined, `byte ${i}`);
    }
    assert.equal(open(nm, box.subarray(0, BOX_OVERHEAD - 1)), undefined);
    assert.equal(open(nm, seal(nm, Buffer.alloc(0)))?.length, 0, 'an empty message is fine');
  });

  it('is not the IETF XChaCha20-Poly1305 AEAD: same ciphertext, different tag', () => {
    const nm = unhex('3948694a4eb6ed9cb367e54be4a8baa4d2eb290cd423eb5965b18f961065b1b1');
    const nonce = unhex('51ab24bbcab17286be9bd977477ec9fe2ccfae6f149da94a');
    const msg = Buffer.from('POST /checkv2 HTTP/1.0\r\n\r\n');
    const ours = seal(nm, msg, nonce);
    const aead = xchacha20poly1305(nm, nonce).encrypt(msg);
    assert.equal(hex(ours.subarray(BOX_OVERHEAD)), hex(aead.subarray(0, msg.length)));
    assert.notEqual(hex(ours.subarray(24, 40)), hex(aead.subarray(msg.length)));
  });
});

describe('Key header', () => {
  const server = generateKeypair();
  const client = generateKeypair();

  it('formats as 8 + 1 + 52 characters and parses back', () => {
    const v = formatKeyHeader(server.id, client.publicKey);
    assert.match(v, /^[a-z0-9]{8}=[a-z0-9]{52}$/);
    const p = parseKeyHeader(v)!;
    assert.equal(hex(p.shortId!), hex(server.id.subarray(0, 5)));
    assert.equal(hex(p.peerKey!), hex(client.publicKey));
  });

  it('takes the full 103-character id too; no "=" means no encryption; bad parts are undefined', () => {
    const full = `${base32Encode(keyId(server.publicKey))}=${base32Encode(client.publicKey)}`;
    assert.equal(hex(parseKeyHeader(full)!.shortId!), hex(server.id.subarray(0, 5)));
    assert.equal(parseKeyHeader('just-a-value'), undefined);
    assert.equal(parseKeyHeader(`abc=${base32Encode(client.publicKey)}`)!.shortId, undefined, 'shorter than 5 bytes');
    assert.equal(parseKeyHeader(`${base32Encode(server.id)} = ${base32Encode(client.publicKey)}`)!.shortId, undefined, 'spaces are not base32');
    assert.equal(parseKeyHeader(`${base32Encode(server.id)}=`)!.peerKey, undefined);
  });
});

describe('local peers (encrypted_only exemptions, as Rspamd decides)', () => {
  it('loopback, IPv6 link- and site-local, unix sockets; not private IPv4 or public addresses', () => {
    for (const a of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1', 'fe80::1', 'fec0::5', '']) assert.equal(isLocalPeer(a), true, a);
    for (const a of ['10.0.0.1', '192.168.1.1', '192.0.2.2', 'fd00::2', '2001:db8::1', '::ffff:10.0.0.1', 'garbage']) assert.equal(isLocalPeer(a), false, a);
  });
});
