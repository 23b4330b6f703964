// The `Key: <short id>=<client public key>` header of an encrypted request.

import { base32Decode, base32DecodeExact, base32Encode } from '../../core/base32.js';
import { KEY_BYTES } from '../../crypto/cryptobox.js';
import { SHORT_ID_BYTES } from '../../crypto/keypair.js';

export interface ParsedKeyHeader {
  /** The id part, decoded; undefined when it is not base32 or shorter than a short id. */
  shortId: Uint8Array | undefined;
  /** The client's public key; undefined when it is not 32 bytes of base32. */
  peerKey: Uint8Array | undefined;
}

/** `Key:` value a client sends to a server with public key id `serverId`. */
export function formatKeyHeader(serverId: Uint8Array, clientPublicKey: Uint8Array): string {
  return `${base32Encode(serverId.subarray(0, SHORT_ID_BYTES))}=${base32Encode(clientPublicKey)}`;
}

/**
 * Splits at the first `=`. Undefined when there is no `=` at all: Rspamd then ignores the
 * header and treats the request as plaintext. The id part may be longer than a short id
 * (the full 103-character id is accepted); only its first 5 bytes are compared.
 */
export function parseKeyHeader(value: string): ParsedKeyHeader | undefined {
  const eq = value.indexOf('=');
  if (eq < 0) return undefined;
  const id = base32Decode(value.slice(0, eq));
  return {
    shortId: id && id.length >= SHORT_ID_BYTES ? id.subarray(0, SHORT_ID_BYTES) : undefined,
    peerKey: base32DecodeExact(value.slice(eq + 1), KEY_BYTES),
  };
}
