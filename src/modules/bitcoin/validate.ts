// Checksums of crypto-currency wallet addresses: a string that passes one is an address someone
// derived from a key, not a random token of the same shape (a message id, a tracking code).
// Pure functions; no I/O.

import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const BASE58_INDEX = new Map([...BASE58].map((c, i) => [c, i]));
/** Version byte + 20-byte hash + 4-byte checksum: every legacy and P2SH address decodes to 25 bytes. */
const BASE58CHECK_BYTES = 25;

/**
 * Base58Check of a legacy (P2PKH, `1…`) or script (P2SH, `3…`) Bitcoin address, and of the
 * Litecoin ones of the same layout (`L…`, `M…`): the last 4 bytes are the first 4 of
 * sha256(sha256(version + hash)). Like Rspamd, the version byte itself is not checked.
 */
export function isBase58CheckAddress(word: string): boolean {
  const bytes = new Uint8Array(BASE58CHECK_BYTES);
  for (const ch of word) {
    const digit = BASE58_INDEX.get(ch);
    if (digit === undefined) return false;
    let carry = digit;
    for (let i = BASE58CHECK_BYTES - 1; i >= 0; i--) {
      carry += 58 * bytes[i]!;
      bytes[i] = carry & 0xff;
      carry >>= 8;
    }
    // More than 25 bytes of value: not an address of this layout.
    if (carry !== 0) return false;
  }
  const check = sha256(sha256(bytes.subarray(0, 21)));
  for (let i = 0; i < 4; i++) if (check[i] !== bytes[21 + i]) return false;
  return true;
}

const BECH32_CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const BECH32_INDEX = new Map([...BECH32_CHARSET].map((c, i) => [c, i]));
const BECH32_GEN = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
/** Checksum constants: bech32 (BIP 173, segwit v0) and bech32m (BIP 350, v1+ such as taproot). */
const BECH32_CONST = 1;
const BECH32M_CONST = 0x2bc830a3;
/** BIP 173's length limit of a whole bech32 string. */
const BECH32_MAX_LENGTH = 90;

function bech32Polymod(values: readonly number[]): number {
  let chk = 1;
  for (const v of values) {
    const top = chk >>> 25;
    chk = (((chk & 0x1ffffff) << 5) ^ v) >>> 0;
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) chk = (chk ^ BECH32_GEN[i]!) >>> 0;
  }
  return chk;
}

function bech32Data(s: string): number[] | undefined {
  const out: number[] = [];
  for (const ch of s) {
    const v = BECH32_INDEX.get(ch);
    if (v === undefined) return undefined;
    out.push(v);
  }
  return out;
}

/**
 * A segwit address (`bc1…`, `ltc1…`, testnet `tb1…`): bech32 for witness version 0, bech32m for
 * the later versions, as BIP 350 requires. Mixed case is invalid (BIP 173).
 */
export function isSegwitAddress(word: string): boolean {
  if (word.length > BECH32_MAX_LENGTH || (word !== word.toLowerCase() && word !== word.toUpperCase())) return false;
  const s = word.toLowerCase();
  const sep = s.lastIndexOf('1');
  // The human-readable part, then at least the witness version and 6 checksum characters.
  if (sep < 1 || sep + 8 > s.length) return false;
  const hrp = s.slice(0, sep);
  const data = bech32Data(s.slice(sep + 1));
  if (!data) return false;
  const expanded: number[] = [];
  for (let i = 0; i < hrp.length; i++) expanded.push(hrp.charCodeAt(i) >> 5);
  expanded.push(0);
  for (let i = 0; i < hrp.length; i++) expanded.push(hrp.charCodeAt(i) & 31);
  const check = bech32Polymod([...expanded, ...data]);
  const version = data[0]!;
  if (version > 16) return false;
  return check === (version === 0 ? BECH32_CONST : BECH32M_CONST);
}

const CASHADDR_GEN = [0x98f2bc8e61n, 0x79b76d99e2n, 0xf33e5fb3c4n, 0xae2eabe2a8n, 0x1e4f43e470n];
/** Payload of a cashaddr: version byte and hash (at least 20 bytes) in 5-bit groups, then an 8-group checksum. */
const CASHADDR_MIN_GROUPS = 42;

/**
 * A Bitcoin Cash address in cashaddr form, `bitcoincash:q…` or the bare payload (the prefix
 * is then `bitcoincash`, as wallets display it): a 40-bit BCH checksum over the prefix's low
 * five bits, a zero and the payload.
 */
export function isCashAddress(word: string): boolean {
  const colon = word.indexOf(':');
  const prefix = colon >= 0 ? word.slice(0, colon).toLowerCase() : 'bitcoincash';
  const body = (colon >= 0 ? word.slice(colon + 1) : word).toLowerCase();
  if (body.length < CASHADDR_MIN_GROUPS || body.length > BECH32_MAX_LENGTH || !/^[a-z]+$/.test(prefix)) return false;
  const data = bech32Data(body);
  if (!data) return false;
  let c = 1n;
  const step = (d: number): void => {
    const c0 = c >> 35n;
    c = ((c & 0x07ffffffffn) << 5n) ^ BigInt(d);
    for (let i = 0; i < 5; i++) if ((c0 >> BigInt(i)) & 1n) c ^= CASHADDR_GEN[i]!;
  };
  for (let i = 0; i < prefix.length; i++) step(prefix.charCodeAt(i) & 31);
  step(0);
  for (const d of data) step(d);
  return c === 1n;
}

/**
 * An Ethereum address with the EIP-55 checksum: `0x` and 40 hex digits whose letters are upper
 * case exactly where the keccak-256 of the lower-case hex has a nibble of 8 or more. An
 * all-lower or all-upper address carries no checksum and is not accepted: 40 hex digits alone
 * are as likely a hash as a wallet.
 */
export function isEthereumAddress(word: string): boolean {
  if (!/^0x[0-9a-fA-F]{40}$/.test(word)) return false;
  const hex = word.slice(2);
  if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) return false;
  const hash = keccak_256(new TextEncoder().encode(hex.toLowerCase()));
  for (let i = 0; i < 40; i++) {
    const ch = hex[i]!;
    if (ch >= '0' && ch <= '9') continue;
    const nibble = (hash[i >> 1]! >> (i % 2 === 0 ? 4 : 0)) & 0xf;
    if ((nibble >= 8) !== (ch >= 'A' && ch <= 'F')) return false;
  }
  return true;
}
