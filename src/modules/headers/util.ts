// Small pure helpers shared by the headers module's callbacks.
import type { EmailAddress, Task } from '../../plugin-api/index.js';

export function eqCaseless(a: string | undefined, b: string | undefined): boolean {
  return a !== undefined && b !== undefined && a.toLowerCase() === b.toLowerCase();
}

/** Recipients named in the message headers (Rspamd's `get_recipients('mime')`). */
export function mimeRecipients(task: Task): EmailAddress[] {
  const m = task.message;
  return m.cc.length ? [...m.to, ...m.cc] : m.to;
}

/** Raw 8-bit characters in the address itself (not an encoded display name). */
export function hasEightBit(addr: EmailAddress): boolean {
  return /[^\x00-\x7f]/.test(addr.address);
}

/** Picks the name of a counting symbol: the largest threshold not above n. */
export function countBucket(n: number, buckets: ReadonlyArray<readonly [number, string]>): string {
  let name = 'ZERO';
  for (const [min, label] of buckets) if (n >= min) name = label;
  return name;
}
