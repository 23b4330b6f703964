import { z } from 'zod';
import { ROUTINES } from './routines.js';

/** Routine names mailsift implements; `use` and `routines` keys outside them are errors, not silent no-ops. */
const ROUTINE_NAMES = Object.keys(ROUTINES) as [string, ...string[]];
const RoutineName = z.enum(ROUTINE_NAMES);

/** Which existing instances a routine removes: 0 all, N the N-th, −N the N-th from the end; false: none. */
const RemoveSpec = z.union([z.number().int(), z.array(z.number().int()), z.literal(false), z.null()]);

/** Per-routine overrides (`routines { x-spamd-bar { header = …; positive = … } }`). */
export const RoutineOptions = z
  .strictObject({
    header: z.string(),
    remove: RemoveSpec,
    /** Insert position for the added header (milter `order`): -1 append, 0 first, N after N headers. */
    order: z.number().int(),
    value: z.string(),
    hostname: z.string(),
    positive: z.string(),
    negative: z.string(),
    neutral: z.string(),
    char: z.string(),
    sort_by: z.enum(['score', 'name']),
    symbols: z.array(z.string()),
    symbols_fail: z.array(z.string()),
    status_clean: z.string(),
    status_infected: z.string(),
    status_fail: z.string(),
    add_smtp_user: z.boolean(),
    /** add-headers: name → static value; remove-headers: name → remove spec. */
    headers: z.record(z.string(), z.union([z.string(), z.number().int()])),
  })
  .partial();
export type RoutineOptions = z.infer<typeof RoutineOptions>;

/** Text appended to every text part of the message (proves the body-rewrite path). */
const Footer = z.strictObject({
  /** Appended to text/plain parts. */
  text: z.string().optional(),
  /** Inserted before `</body>` (or appended) in text/html parts. */
  html: z.string().optional(),
  /** Only add the footer for these actions; empty: always. */
  actions: z.array(z.string()).default([]),
});

export const MilterHeadersConfig = z.strictObject({
  /** Routines to run (see routines.ts for the list). */
  use: z.array(RoutineName).default([]),
  /** Also run x-spamd-result, x-rspamd-server, x-rspamd-queue-id and x-rspamd-action. */
  extended_spam_headers: z.boolean().default(false),
  /** Remove X-Spam headers set upstream (routine remove-spam-flag). */
  remove_upstream_spam_flag: z.boolean().default(true),
  /** Skip routines for mail from local addresses / authenticated users, except those listed below. */
  skip_local: z.boolean().default(true),
  skip_authenticated: z.boolean().default(true),
  skip_all: z.boolean().default(false),
  local_headers: z.array(z.string()).default([]),
  authenticated_headers: z.array(z.string()).default([]),
  /** Recipients (address, user or @domain) for whom routines are never skipped. */
  extended_headers_rcpt: z.array(z.string()).default([]),
  routines: z.partialRecord(RoutineName, RoutineOptions).default({}),
  footer: Footer.optional(),
  /** Write the rewritten Subject (action `rewrite subject`) into the message itself. */
  rewrite_subject_in_message: z.boolean().default(false),
});
export type MilterHeadersConfig = z.infer<typeof MilterHeadersConfig>;
export type FooterConfig = z.infer<typeof Footer>;
