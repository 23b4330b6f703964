import { z } from 'zod';

/** What a bucket is keyed by (Rspamd's built-in ratelimit selectors). */
export const BUCKET_SELECTORS = ['to', 'to_ip', 'to_ip_from', 'bounce_to', 'bounce_to_ip', 'from', 'ip', 'user'] as const;
export type BucketSelector = (typeof BUCKET_SELECTORS)[number];

export function isBuiltinSelector(s: string): s is BucketSelector {
  return (BUCKET_SELECTORS as readonly string[]).includes(s);
}

const UNIT_SECONDS: Record<string, number> = { s: 1, sec: 1, m: 60, min: 60, h: 3600, hour: 3600, d: 86400, day: 86400 };

/** `10 / 1m` → messages per second; a plain number is already per second. */
export function parseRate(v: number | string): number {
  if (typeof v === 'number') return v;
  const m = /^\s*([\d.]+)\s*\/\s*([\d.]*)\s*([a-z]+)\s*$/i.exec(v);
  if (!m) throw new Error(`bad rate "${v}": expected a number or "N / <period>" (s, m, h, d)`);
  const unit = UNIT_SECONDS[m[3]!.toLowerCase()];
  if (unit === undefined) throw new Error(`bad rate "${v}": unknown unit ${m[3]}`);
  const periods = m[2] === '' ? 1 : Number(m[2]);
  return Number(m[1]) / (periods * unit);
}

const Rate = z
  .union([
    /** Shorthand: `"100 / 1h"` is a burst of 100 leaking at 100 per hour. */
    z.string(),
    z.strictObject({
      /** Messages the bucket holds before it overflows. */
      burst: z.number().positive(),
      /** How fast the bucket leaks: per second, or `"N / <period>"`. */
      rate: z.union([z.number().positive(), z.string()]),
    }),
  ])
  .transform((v, ctx) => {
    try {
      if (typeof v === 'string') {
        const burst = Number(/^\s*([\d.]+)/.exec(v)?.[1]);
        return { burst, rate: parseRate(v) };
      }
      return { burst: v.burst, rate: parseRate(v.rate) };
    } catch (e) {
      ctx.addIssue({ code: 'custom', message: (e as Error).message });
      return z.NEVER;
    }
  });

const Bucket = z.strictObject({
  /**
   * What the bucket is keyed by: one of BUCKET_SELECTORS, or any selector,
   * e.g. `user.lower` or `from('mime'):domain;ip.ipmask(24)`; each value it yields is one bucket.
   */
  selector: z.string().min(1),
  bucket: Rate,
  /** Insert this symbol instead of forcing the soft reject. */
  info_symbol: z.string().optional(),
});
export type BucketConfig = z.infer<typeof Bucket>;

export const RatelimitConfig = z.strictObject({
  /** Buckets by name; none by default, as in Rspamd. */
  rates: z.record(z.string(), Bucket).default({}),
  /** Recipients (local part or whole address) never limited. */
  whitelisted_rcpts: z.array(z.string()).default(['postmaster', 'mailer-daemon']),
  /** Client addresses/networks never limited. */
  whitelisted_ip: z.array(z.string()).default([]),
  /** Authenticated users never limited. */
  whitelisted_user: z.array(z.string()).default([]),
  /** Prefix of the bucket keys in the key-value store. */
  prefix: z.string().default('RL'),
  /** Seconds an idle bucket is kept (it is empty long before for any sane rate). */
  expire: z.number().positive().default(86400),
  /** Action forced when a bucket overflows. */
  action: z.string().default('soft reject'),
  message: z.string().default('Ratelimit exceeded'),
  /** Symbol inserted with the overflowing bucket as option. */
  symbol: z.string().default('RATELIMITED'),
});
export type RatelimitConfig = z.infer<typeof RatelimitConfig>;
