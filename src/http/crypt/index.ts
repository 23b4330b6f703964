// HTTP encryption compatible with Rspamd's HTTPCrypt.
export { HttpCryptServer, createHttpCrypt } from './server-crypt.js';
export type { HttpCryptOptions, CryptSession, Unwrapped } from './server-crypt.js';
export { formatKeyHeader, parseKeyHeader } from './key-header.js';
export type { ParsedKeyHeader } from './key-header.js';
export { serializeInnerRequest, sealRequest, openReplyBody, parseResponse, BadPeerKeyError } from './envelope.js';
export type { InnerRequest, SealedRequest, SealOptions, ParsedResponse } from './envelope.js';
export { isLocalPeer } from './local-peer.js';
