// The scan client library: what mailsiftc, the benchmark and (later) the proxy import.
export { ScanClient, parseServer, DEFAULT_SCAN_PORT, DEFAULT_TIMEOUT_MS, MAX_REPLY_BYTES } from './scan-client.js';
export type { ScanClientOptions, ServerAddress } from './scan-client.js';
export { ScanClientError, CLIENT_ERROR_CODES, isScanClientError } from './errors.js';
export type { ClientErrorCode } from './errors.js';
export { buildV2Request, buildV3Request, v3Metadata } from './request.js';
export type { BuiltRequest, HeaderPairs } from './request.js';
export { decodeReply, errorText } from './reply.js';
export type { ScanOptions, ScanReply, ScanResultBody, ReplySymbol, ProtocolVersion } from './types.js';
export { renderScanText, renderMimeOutput } from './render-text.js';
