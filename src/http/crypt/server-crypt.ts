// The server side of HTTP encryption, used by the transport: opens an
// encrypted request into the inner request, seals the reply to the client's key, and turns
// every failure into a coded error. `encrypted_only` refusals are decided here too.

import { equalBytes } from '@noble/ciphers/utils.js';
import { base32Encode } from '../../core/base32.js';
import { decryptUnchecked, seal, sharedKey, verify, BOX_OVERHEAD } from '../../crypto/cryptobox.js';
import { SHORT_ID_BYTES, type KexKeypair } from '../../crypto/keypair.js';
import { classifyError, MailsiftError } from '../errors.js';
import { replyBodyBytes, serializeReplyHead } from '../reply.js';
import { RequestParser, type ParsedRequest, type ParserLimits } from '../request-parser.js';
import type { Reply } from '../types.js';
import { parseKeyHeader } from './key-header.js';
import { isLocalPeer } from './local-peer.js';

/**
 * Shared keys kept per client public key. Rspamd caches them too: the X25519 step is the
 * expensive part, and proxies reuse one client key for minutes. Bounded so a flood of fresh
 * client keys (rspamc makes one per connection) cannot grow memory.
 */
const NM_CACHE_SIZE = 1024;

export interface HttpCryptOptions {
  keypair: KexKeypair;
  /** Refuse plaintext requests from non-local peers (`encrypted_only`). */
  encryptedOnly?: boolean;
  /** Told about every refused request (the transport logs it). */
  onReject?: (code: string, message: string, peer: string) => void;
}

/** What the connection remembers about an opened request: the reply is sealed with `nm`. */
export interface CryptSession {
  nm: Uint8Array;
  /** Client public key, base32 (for logs and `Request.crypt`). */
  peerKey: string;
}

export type Unwrapped =
  | { kind: 'plain' }
  | { kind: 'opened'; inner: ParsedRequest; session: CryptSession }
  /** Refused. With a session the error reply is sealed (the client key was accepted), else plaintext. */
  | { kind: 'rejected'; error: MailsiftError; session?: CryptSession };

export class HttpCryptServer {
  readonly #kp: KexKeypair;
  readonly #shortId: Uint8Array;
  readonly #encryptedOnly: boolean;
  readonly #onReject: HttpCryptOptions['onReject'];
  readonly #nmCache = new Map<string, Uint8Array | null>();

  constructor(opts: HttpCryptOptions) {
    this.#kp = opts.keypair;
    this.#shortId = opts.keypair.id.subarray(0, SHORT_ID_BYTES);
    this.#encryptedOnly = opts.encryptedOnly ?? false;
    this.#onReject = opts.onReject;
  }

  /** Looks at a parsed outer request: plaintext, opened, or refused. */
  unwrap(outer: ParsedRequest, peer: string, limits: ParserLimits): Unwrapped {
    const keyValue = outer.headers.first('key');
    const key = keyValue === undefined ? undefined : parseKeyHeader(keyValue);
    if (!key) {
      if (this.#encryptedOnly && !isLocalPeer(peer)) return this.#reject(peer, new MailsiftError('ERR_CRYPT_REQUIRED', 'Encryption required'));
      return { kind: 'plain' };
    }
    if (!key.peerKey) return this.#reject(peer, new MailsiftError('ERR_CRYPT_BAD_KEY_HEADER', 'Invalid Key header: the client public key is not 52 base32 characters'));
    const nm = this.#sharedKey(key.peerKey);
    if (!nm) return this.#reject(peer, new MailsiftError('ERR_CRYPT_BAD_KEY_HEADER', 'Invalid Key header: unusable client public key'));
    // The MAC is computed whether or not the short id matches, so an unknown key costs the
    // same time as a bad MAC: a refusal's timing says nothing about which check failed.
    const macOk = verify(nm, outer.body);
    const idOk = key.shortId !== undefined && equalBytes(key.shortId, this.#shortId);
    if (!idOk) {
      if (!key.shortId) return this.#reject(peer, new MailsiftError('ERR_CRYPT_BAD_KEY_HEADER', 'Invalid Key header: the key id is not base32'));
      return this.#reject(peer, new MailsiftError('ERR_CRYPT_UNKNOWN_KEY', 'Unknown key id: the request was encrypted to another key'));
    }
    const session: CryptSession = { nm, peerKey: base32Encode(key.peerKey) };
    if (outer.body.length < BOX_OVERHEAD) return this.#reject(peer, new MailsiftError('ERR_CRYPT_SHORT_BODY', 'Encrypted body shorter than nonce and MAC'), session);
    if (!macOk) return this.#reject(peer, new MailsiftError('ERR_CRYPT_BAD_MAC', 'Cannot verify encrypted message: bad MAC'), session);
    const plain = decryptUnchecked(nm, outer.body);
    const inner = parseInner(plain, limits);
    if (!inner) return this.#reject(peer, new MailsiftError('ERR_CRYPT_BAD_INNER', 'Decrypted data is not one complete HTTP request'), session);
    return { kind: 'opened', inner, session };
  }

  /** The outer reply for `reply`: `200 OK` around the sealed inner reply. */
  wrap(reply: Reply, session: CryptSession, keepAlive: boolean, serverName: string): Reply {
    const raw = typeof reply.body === 'string' ? Buffer.from(reply.body) : reply.body;
    const body = reply.raw ? raw : replyBodyBytes(reply);
    const inner = reply.raw ? body : Buffer.concat([Buffer.from(serializeReplyHead(reply, body.length, keepAlive, serverName), 'latin1'), body]);
    const outer: Reply = { status: 200, contentType: 'application/octet-stream', body: seal(session.nm, inner) };
    if (reply.close) outer.close = true;
    return outer;
  }

  #sharedKey(peerKey: Uint8Array): Uint8Array | undefined {
    const k = Buffer.from(peerKey).toString('hex');
    const hit = this.#nmCache.get(k);
    if (hit !== undefined) {
      // Refresh recency (Map keeps insertion order, so the first key is the least recent).
      this.#nmCache.delete(k);
      this.#nmCache.set(k, hit);
      return hit ?? undefined;
    }
    const nm = sharedKey(this.#kp.secretKey, peerKey) ?? null;
    if (this.#nmCache.size >= NM_CACHE_SIZE) this.#nmCache.delete(this.#nmCache.keys().next().value!);
    this.#nmCache.set(k, nm);
    return nm ?? undefined;
  }

  #reject(peer: string, error: MailsiftError, session?: CryptSession): Unwrapped {
    this.#onReject?.(error.code, error.message, peer);
    return session ? { kind: 'rejected', error, session } : { kind: 'rejected', error };
  }
}

/**
 * The decrypted bytes must be exactly one complete request: a body needs a
 * Content-Length (an HTTP/1.0 POST without one would otherwise run to the end), and
 * nothing may follow it.
 */
function parseInner(plain: Buffer, limits: ParserLimits): ParsedRequest | undefined {
  const p = new RequestParser(limits);
  p.feed(plain);
  let req: ParsedRequest | undefined;
  try {
    req = p.next();
    if (!req && p.awaitingCloseBody) req = p.finishEmptyCloseBody();
  } catch (err) {
    // A malformed inner request is the client's (ERR_CRYPT_BAD_INNER); an uncoded error is a
    // bug and goes on to the transport, which answers 500 and logs it.
    if (classifyError(err).known) return undefined;
    throw err;
  }
  if (!req || p.inRequest) return undefined;
  return req;
}

/**
 * A worker's HttpCryptServer from its config (`keypair`, `encrypted_only`), or undefined when
 * it has no keypair. Every refusal is logged as a warning with its code and the peer.
 */
export function createHttpCrypt(
  cfg: { keypair: KexKeypair; encryptedOnly: boolean } | undefined,
  log: { warn(msg: string, extra?: Record<string, unknown>): void },
): HttpCryptServer | undefined {
  if (!cfg) return undefined;
  return new HttpCryptServer({
    keypair: cfg.keypair,
    encryptedOnly: cfg.encryptedOnly,
    onReject: (code, message, peer) => log.warn(`refused a request: ${message}`, { code, peer }),
  });
}
