// Which buckets a message falls into: one key per (bucket, recipient) for recipient-keyed
// selectors, one for the others. Keys are hashed so addresses never sit in the store in clear.

import { createHash } from 'node:crypto';
import type { CompiledSelector, Task } from '../../plugin-api/index.js';
import type { BucketSelector } from './config.js';

export function hashKey(prefix: string, name: string, parts: readonly string[]): string {
  const h = createHash('sha256').update(parts.join('\0')).digest('base64url').slice(0, 24);
  return `${prefix}:${name}:${h}`;
}

/** Key parts for one selector, or [] when the selector does not apply to this message. */
export function selectorParts(task: Task, sel: BucketSelector, rcpts: readonly string[]): string[][] {
  const ip = task.meta.ip;
  const from = task.envelopeFrom?.address.toLowerCase();
  const bounce = task.envelopeFrom !== undefined && task.envelopeFrom.address === '';
  switch (sel) {
    case 'to':
      return rcpts.map((r) => [r]);
    case 'to_ip':
      return ip ? rcpts.map((r) => [r, ip]) : [];
    case 'to_ip_from':
      return ip && from ? rcpts.map((r) => [r, ip, from]) : [];
    case 'bounce_to':
      return bounce ? rcpts.map((r) => [r]) : [];
    case 'bounce_to_ip':
      return bounce && ip ? rcpts.map((r) => [r, ip]) : [];
    case 'from':
      return from ? [[from]] : [];
    case 'ip':
      return ip ? [[ip]] : [];
    case 'user':
      return task.meta.user ? [[task.meta.user.toLowerCase()]] : [];
  }
}

/** Distinct keys one bucket's selector yields for a task, each its own bucket (a cap keeps a hostile list bounded). */
export const MAX_SELECTOR_BUCKETS = 64;

/** Key parts from a full selector: each value it yields (combined with ':') is one bucket. */
export function selectorValueParts(task: Task, selector: CompiledSelector): string[][] {
  const v = selector.combine(task, ':');
  if (v === undefined) return [];
  const values = [...new Set(typeof v === 'string' ? [v] : v)].filter((x) => x !== '');
  return values.slice(0, MAX_SELECTOR_BUCKETS).map((x) => [x]);
}
