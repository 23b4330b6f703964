// X25519 for the httpcrypt surface through node:crypto (OpenSSL) instead of the pure-JS curve
// the server uses: every input seals with a fresh client keypair, which costs two scalar
// multiplications, and in JS those were most of that surface's generation CPU (~4 ms of ~5 ms
// an input) on the cores the server needs. The bytes are the same: a self-check against the
// server's implementation decides once which one is used.
import { createPrivateKey, createPublicKey, diffieHellman, type KeyObject } from 'node:crypto';
import { x25519 } from '@noble/curves/ed25519.js';
import { hchacha20 } from '../../src/crypto/cryptobox.js';

const ZERO16 = new Uint8Array(16);
/** The X25519 base point (u = 9): X25519(secret, base) is the public key. */
const BASE_POINT = Buffer.concat([Buffer.from([9]), Buffer.alloc(31)]);

function privateKey(secret: Uint8Array): KeyObject {
  // OpenSSL builds an X25519 private key from `d` alone and derives the public half itself; the
  // JWK form still has to carry an `x`, which is not used (the self-check below proves it).
  return createPrivateKey({ key: { kty: 'OKP', crv: 'X25519', d: Buffer.from(secret).toString('base64url'), x: BASE_POINT.toString('base64url') }, format: 'jwk' });
}

function publicKeyObject(pub: Uint8Array): KeyObject {
  return createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: Buffer.from(pub).toString('base64url') }, format: 'jwk' });
}

const basePoint = publicKeyObject(BASE_POINT);

function nativePublicKey(secret: Uint8Array): Uint8Array {
  return new Uint8Array(diffieHellman({ privateKey: privateKey(secret), publicKey: basePoint }));
}

function nativeShared(secret: Uint8Array, peer: KeyObject): Uint8Array {
  return new Uint8Array(diffieHellman({ privateKey: privateKey(secret), publicKey: peer }));
}

/** True when node:crypto gives the bytes the server's implementation gives (checked once). */
const nativeAgrees = ((): boolean => {
  try {
    const a = new Uint8Array(32).map((_, i) => (i * 37 + 11) & 0xff);
    const b = new Uint8Array(32).map((_, i) => (i * 91 + 5) & 0xff);
    const pa = x25519.getPublicKey(a);
    const pb = x25519.getPublicKey(b);
    return Buffer.from(nativePublicKey(a)).equals(Buffer.from(pa))
      && Buffer.from(nativeShared(a, publicKeyObject(pb))).equals(Buffer.from(x25519.getSharedSecret(a, pb)));
  } catch {
    return false; // no X25519 in this OpenSSL: the JS curve below is used
  }
})();
if (!nativeAgrees) process.stderr.write('fuzz: node:crypto X25519 differs from @noble/curves here; the httpcrypt surface uses the slower JS curve\n');

export function publicKeyOf(secret: Uint8Array): Uint8Array {
  return nativeAgrees ? nativePublicKey(secret) : x25519.getPublicKey(secret);
}

/** Shared-key derivation for one peer: the cryptobox `nm` = HChaCha20(X25519(secret, peer), 0¹⁶). */
export function sharedKeyFor(peerPublicKey: Uint8Array): (secret: Uint8Array) => Uint8Array {
  const peer = nativeAgrees ? publicKeyObject(peerPublicKey) : undefined;
  return (secret) => hchacha20(peer ? nativeShared(secret, peer) : x25519.getSharedSecret(secret, peerPublicKey), ZERO16);
}
