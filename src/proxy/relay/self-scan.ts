// Self-scan: the request is answered by the proxy's own engine through
// the normal worker's route table, in-process, so the reply is byte for byte what a scanner
// would send (/checkv2, /checkv3, the v1 paths, /ping). The handler is given by the worker that
// builds the engine (src/workers/proxy.ts); this file only translates between the two shapes.

import { parseTarget } from '../../http/request-head.js';
import { RequestHeaders, type Handler, type Reply, type Request } from '../../http/types.js';
import { zstdDecompressBounded } from '../../http/zstd.js';
import type { RelayRequest, RelayResponse, ScanRelay } from '../relay-types.js';
import { relayError } from './errors.js';

export const SELF_UPSTREAM = 'self';

export interface SelfScanOptions {
  handler: Handler;
  /** Forced `Settings-ID` (the self-scan group's `settings_id`). */
  settingsId?: string | undefined;
  /** Largest reply body after decompression. */
  maxReplyBytes: number;
}

export class SelfScanRelay implements ScanRelay {
  readonly #o: SelfScanOptions;

  constructor(o: SelfScanOptions) {
    this.#o = o;
  }

  async relay(req: RelayRequest, signal?: AbortSignal): Promise<RelayResponse> {
    if (signal?.aborted) throw relayError('ERR_RELAY_FAILED', 'Unknown gateway error: request abandoned');
    let target;
    try {
      target = parseTarget(req.path || '/checkv2');
    } catch (err) {
      throw relayError('ERR_RELAY_FAILED', `Unknown gateway error: ${(err as Error).message}`, err);
    }
    const headers = new RequestHeaders();
    for (const [k, v] of req.headers) {
      if (this.#o.settingsId !== undefined && k.toLowerCase() === 'settings-id') continue;
      headers.add(k, v);
    }
    if (this.#o.settingsId !== undefined) headers.add('Settings-ID', this.#o.settingsId);
    // As the transport does: query parameters are request headers for the scan protocol.
    for (const [k, v] of target.query) headers.set(k, v);
    const request: Request = {
      method: req.method,
      path: target.path,
      query: target.query,
      headers,
      body: req.body,
      version: 'HTTP/1.1',
      peer: { address: req.route?.clientAddress ?? '', port: 0 },
      tls: false,
    };
    try {
      return this.#toResponse(await this.#o.handler(request));
    } catch (err) {
      // The route table answers every refusal itself; what escapes is a bug or a reply that
      // cannot be opened, and the contract says a relay failure is a coded one.
      throw relayError('ERR_RELAY_FAILED', `Unknown gateway error: self-scan failed: ${(err as Error).message}`, err);
    }
  }

  #toResponse(reply: Reply): RelayResponse {
    let body = typeof reply.body === 'string' ? Buffer.from(reply.body) : reply.body;
    const headers: Array<[string, string]> = [];
    if (reply.contentType) headers.push(['Content-Type', reply.contentType]);
    let zstd = false;
    for (const [k, v] of reply.headers ?? []) {
      const lower = k.toLowerCase();
      if (lower === 'compression' || (lower === 'content-encoding' && /zstd/i.test(v))) {
        zstd = true;
        continue;
      }
      headers.push([k, v]);
    }
    // Like an upstream's compressed reply: the relay hands out plain bytes (relay-types.ts).
    if (zstd && body.length > 0) body = zstdDecompressBounded(body, this.#o.maxReplyBytes);
    return { status: reply.status, reason: reply.reason ?? (reply.status === 200 ? 'OK' : ''), headers, body, upstream: SELF_UPSTREAM };
  }
}
