// The encrypted variant of the fuzzy protocol: an 84-byte header ("rsfe", the
// first 8 bytes of the server's public key, the client's ephemeral public key, nonce, MAC) in
// front of the sealed command; replies are nonce ‖ MAC ‖ sealed reply with the same shared key.
import { MAC_BYTES, NONCE_BYTES, decryptUnchecked, randomNonce, sealDetached, seal, sharedKey, verify } from '../../crypto/cryptobox.js';
import type { KexKeypair } from '../../crypto/keypair.js';

const MAGIC = Buffer.from('rsfe');
export const KEY_ID_PREFIX_BYTES = 8;
export const ENC_HEADER_BYTES = 4 + KEY_ID_PREFIX_BYTES + 32 + NONCE_BYTES + MAC_BYTES;

export function isEncrypted(packet: Buffer): boolean {
  return packet.length >= ENC_HEADER_BYTES && packet.subarray(0, 4).equals(MAGIC);
}

/** Encrypt a plain command for a server; `nm` is kept by the client to open the reply. */
export function encryptCommand(plain: Buffer, serverPublicKey: Uint8Array, local: KexKeypair): { packet: Buffer; nm: Uint8Array } {
  const nm = sharedKey(local.secretKey, serverPublicKey);
  if (!nm) throw new RangeError('fuzzy: unusable server public key');
  const nonce = randomNonce();
  const { mac, ciphertext } = sealDetached(nm, nonce, plain);
  const packet = Buffer.concat([
    MAGIC,
    Buffer.from(serverPublicKey.subarray(0, KEY_ID_PREFIX_BYTES)),
    Buffer.from(local.publicKey),
    Buffer.from(nonce),
    Buffer.from(mac),
    Buffer.from(ciphertext),
  ]);
  return { packet, nm };
}

/** The key id prefix a packet names (to pick the server keypair). */
export function packetKeyId(packet: Buffer): Buffer {
  return packet.subarray(4, 4 + KEY_ID_PREFIX_BYTES);
}

/** Open an encrypted command with one of the server's keypairs; undefined when no key fits or the MAC fails. */
export function decryptCommand(packet: Buffer, keypairs: readonly KexKeypair[]): { plain: Buffer; nm: Uint8Array; keypair: KexKeypair } | undefined {
  if (!isEncrypted(packet)) return undefined;
  const id = packetKeyId(packet);
  // Rspamd falls back to the default (first) key when no key id matches.
  const kp = keypairs.find((k) => Buffer.from(k.publicKey.subarray(0, KEY_ID_PREFIX_BYTES)).equals(id)) ?? keypairs[0];
  if (!kp) return undefined;
  const clientPk = packet.subarray(12, 44);
  const nm = sharedKey(kp.secretKey, clientPk);
  if (!nm) return undefined;
  // Reassemble nonce ‖ MAC ‖ ciphertext, the box layout cryptobox.ts works on.
  const box = Buffer.concat([packet.subarray(44, 44 + NONCE_BYTES + MAC_BYTES), packet.subarray(ENC_HEADER_BYTES)]);
  if (!verify(nm, box)) return undefined;
  return { plain: decryptUnchecked(nm, box), nm, keypair: kp };
}

export function encryptReply(plain: Buffer, nm: Uint8Array): Buffer {
  return seal(nm, plain);
}

export function decryptReply(packet: Buffer, nm: Uint8Array): Buffer | undefined {
  if (!verify(nm, packet)) return undefined;
  return decryptUnchecked(nm, packet);
}
