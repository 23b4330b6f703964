// The two keys a message is greylisted under: a hash of the start of its body, and a hash of
// (masked client address, envelope sender, recipients). A retry matches either one.

import { createHash } from 'node:crypto';
import { maskedAddress } from '../../module-helpers/masked-address.js';
import type { Task } from '../../plugin-api/index.js';
import type { GreylistConfig } from './config.js';

function digest(parts: ReadonlyArray<string | Buffer>): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\0');
  return h.digest('base64url').slice(0, 32);
}

/** The client address reduced to its network, so retries from a pool of senders still match. */
export function maskedIp(ip: string | undefined, cfg: GreylistConfig): string {
  return maskedAddress(ip, cfg.ipv4_mask, cfg.ipv6_mask);
}

export interface GreylistKeys {
  body: string;
  meta: string;
}

export function greylistKeys(task: Task, cfg: GreylistConfig): GreylistKeys {
  const m = task.message;
  const body = m.raw.subarray(m.bodyOffset, m.bodyOffset + cfg.max_data_len);
  const rcpts = task.envelopeRcpt.map((r) => r.address.toLowerCase()).sort();
  const from = task.envelopeFrom?.address.toLowerCase() ?? '';
  return {
    body: `${cfg.key_prefix}:b:${digest([body])}`,
    meta: `${cfg.key_prefix}:m:${digest([maskedIp(task.meta.ip, cfg), from, ...rcpts])}`,
  };
}
