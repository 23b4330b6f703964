// X25519 (RFC 7748) over Node's own crypto (OpenSSL) on raw 32-byte keys. A pure-JS curve
// library kept about 1.7 MiB of heap in every process that imported it, which is each of the
// server's processes (HTTPCrypt, fuzzy encryption and the keypair loader all reach this), for an
// operation a server does once per encrypted request (docs/tuning.md, "Memory of each process").
import { createPrivateKey, createPublicKey, diffieHellman, type KeyObject } from 'node:crypto';

const RAW_BYTES = 32;
// The fixed DER wrappers of a raw X25519 key (OID 1.3.101.110): PKCS#8 for a secret, SPKI for a public key.
const PKCS8_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b656e032100', 'hex');

function secretKeyObject(secretKey: Uint8Array): KeyObject {
  if (secretKey.length !== RAW_BYTES) throw new RangeError(`an X25519 secret key is ${RAW_BYTES} bytes`);
  return createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, secretKey]), format: 'der', type: 'pkcs8' });
}

function publicKeyObject(publicKey: Uint8Array): KeyObject {
  if (publicKey.length !== RAW_BYTES) throw new RangeError(`an X25519 public key is ${RAW_BYTES} bytes`);
  return createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' });
}

/** The public key of a 32-byte secret (clamped by the function, as RFC 7748 says). */
export function x25519PublicKey(secretKey: Uint8Array): Uint8Array {
  const der = createPublicKey(secretKeyObject(secretKey)).export({ format: 'der', type: 'spki' });
  return new Uint8Array(der.subarray(der.length - RAW_BYTES));
}

/** X25519(secret, peer); throws when the result is all zeros (a peer key of low order), as OpenSSL refuses it. */
export function x25519SharedSecret(secretKey: Uint8Array, peerPublicKey: Uint8Array): Uint8Array {
  return new Uint8Array(diffieHellman({ privateKey: secretKeyObject(secretKey), publicKey: publicKeyObject(peerPublicKey) }));
}
