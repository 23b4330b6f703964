import { z } from 'zod';

/** RFC 7208 §4.6.4: DNS-querying mechanisms one evaluation may use; bounds the work a hostile record causes. */
export const SPF_MAX_LOOKUPS = 10;
/** RFC 7208 §4.6.4: lookups answering "no such name / no data" before the record is a permerror. */
export const SPF_MAX_VOID_LOOKUPS = 2;

/** spf module options. */
export const SpfConfig = z.strictObject({
  /** Check mail from local/private addresses too. */
  check_local: z.boolean().default(false),
  /** Check mail from authenticated users too. */
  check_authed: z.boolean().default(false),
  /** Mechanisms that query DNS, per evaluation (includes and redirects count). */
  max_dns_requests: z.int().min(1).max(100).default(SPF_MAX_LOOKUPS),
  /** Void lookups allowed before a permanent error. */
  max_void_requests: z.int().min(0).max(100).default(SPF_MAX_VOID_LOOKUPS),
});
export type SpfConfig = z.infer<typeof SpfConfig>;
