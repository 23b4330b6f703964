// What the protocol layer hands the worker: the message, its normalised metadata, and how
// the client wants the answer rendered. Every entry point (v2, v3, legacy) produces this.

import type { ScanMeta } from '../core/scan-types.js';

export type ReplyLayout = 'v2' | 'v1' | 'skip';

export interface ReplyWant {
  layout: ReplyLayout;
  /** Serialise the result as msgpack instead of JSON. */
  msgpack: boolean;
  /** Compress the reply (whole body for v2, each part for v3). */
  compress: boolean;
  /** v3 only: envelope type of the multipart reply. */
  multipartType?: 'multipart/form-data' | 'multipart/mixed';
}

export interface ScanRequest {
  message: Buffer;
  meta: ScanMeta;
  want: ReplyWant;
}
