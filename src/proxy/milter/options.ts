// What the milter front end is told by the proxy worker's configuration (`workers.proxy`,
// the milter keys of Rspamd's proxy), with Rspamd's defaults, and the caps that bound one session.

import type { ActionConfig } from '../../engine/contract.js';

/**
 * How a milter carries out an action (Rspamd's action types). An action the scanner
 * names but the proxy does not know ends in TEMPFAIL, as in Rspamd: custom actions must be
 * declared in the proxy's configuration too.
 */
export type MilterActionType =
  | 'reject'
  | 'soft reject'
  | 'rewrite subject'
  | 'add header'
  | 'greylist'
  | 'no action'
  | 'discard'
  | 'quarantine'
  /** Declared, no milter meaning: ACCEPT. */
  | 'custom';

export interface MilterOptions {
  /** `discard_on_reject`: answer `reject` with SMFIR_DISCARD. */
  discardOnReject: boolean;
  /** `quarantine_on_reject`: answer `reject` with SMFIR_QUARANTINE + ACCEPT. */
  quarantineOnReject: boolean;
  /** `spam_header`: the header set to `Yes` for `add header`. */
  spamHeader: string;
  /** `reject_message`: SMTP text of a reject when the result has no `messages.smtp_message`. */
  rejectMessage: string;
  /** Reason sent with SMFIR_QUARANTINE when the result has no `smtp_message` ([master] option). */
  quarantineMessage: string;
  /** SMTP text of a soft reject when the result has no `smtp_message` ([master] option). */
  tempfailMessage: string;
  /**
   * `client_ca_name`: a client certificate issued by this CA (macro `{cert_issuer}`, compared
   * byte for byte) authenticates its subject (`{cert_subject}`) as the scan's `User`.
   */
  clientCaName?: string;
  /** Action name (as the scanner writes it) → milter type. See milterActions(). */
  actions: ReadonlyMap<string, MilterActionType>;
  /**
   * Close a session that sends nothing for this long while we wait for it. Not the upstream
   * `timeout`: a milter connection lives as long as the SMTP session, which may be idle
   * between commands for Postfix's smtpd_timeout (300 s) or Sendmail's Timeout.command (1 h).
   * The time a scan takes is never counted (the MTA is waiting for us then).
   */
  idleTimeoutMs: number;
  /** `max_message`: a larger message is not buffered nor scanned (see session.ts). */
  maxMessage: number;
  /** Distinct macro names kept per connection; more closes the session. */
  maxMacros: number;
  /** Header fields per message; more closes the session. */
  maxHeaders: number;
  /** Recipients per message; more closes the session. */
  maxRecipients: number;
}

/** Rspamd's six standard actions, which every proxy knows (cfg_utils.c, 3.4). */
const STANDARD_ACTIONS: ReadonlyArray<MilterActionType> = ['reject', 'soft reject', 'rewrite subject', 'add header', 'greylist', 'no action'];

const ACTION_ALIASES: Readonly<Record<string, string>> = {
  add_header: 'add header',
  rewrite_subject: 'rewrite subject',
  soft_reject: 'soft reject',
  no_action: 'no action',
  accept: 'no action',
};

/**
 * The action table from the engine's action config (`mailsift.yaml` `actions`): the standard
 * six, plus each configured action, typed by its `milter` attribute (`discard`, `quarantine`)
 * or, like Rspamd's rspamd_action_from_str, by its name.
 */
export function milterActions(config: Readonly<Record<string, ActionConfig>> = {}): Map<string, MilterActionType> {
  const out = new Map<string, MilterActionType>(STANDARD_ACTIONS.map((a) => [a, a]));
  for (const [rawName, ac] of Object.entries(config)) {
    const name = ACTION_ALIASES[rawName] ?? rawName;
    if (ac.milter === 'discard' || ac.milter === 'quarantine') out.set(name, ac.milter);
    else if ((STANDARD_ACTIONS as readonly string[]).includes(name) || name === 'discard' || name === 'quarantine') out.set(name, name as MilterActionType);
    else out.set(name, 'custom');
  }
  return out;
}

/** Sendmail's Timeout.command: the longest an MTA may stay silent between SMTP commands. */
export const DEFAULT_MILTER_IDLE_TIMEOUT_MS = 60 * 60 * 1000;
/** Rspamd's `max_message`, 50 MiB. */
export const DEFAULT_MILTER_MAX_MESSAGE = 50 * 1024 * 1024;
/**
 * Postfix sends about 25 macros, Sendmail a few more. Names are replaced, not added, so only a
 * peer inventing new names grows the table: this caps that memory.
 */
export const DEFAULT_MILTER_MAX_MACROS = 512;
/** Bounds the per-message header bookkeeping (a header can be 6 bytes on the wire). */
export const DEFAULT_MILTER_MAX_HEADERS = 10_000;
/** Ten times Postfix's smtpd_recipient_limit; bounds the per-message recipient list. */
export const DEFAULT_MILTER_MAX_RECIPIENTS = 10_000;

export function milterOptions(o: Partial<MilterOptions> = {}): MilterOptions {
  const out: MilterOptions = {
    discardOnReject: o.discardOnReject ?? false,
    quarantineOnReject: o.quarantineOnReject ?? false,
    spamHeader: o.spamHeader ?? 'X-Spam',
    rejectMessage: o.rejectMessage ?? 'Spam message rejected',
    quarantineMessage: o.quarantineMessage ?? 'Spam message quarantined',
    tempfailMessage: o.tempfailMessage ?? 'Try again later',
    actions: o.actions ?? milterActions(),
    idleTimeoutMs: o.idleTimeoutMs ?? DEFAULT_MILTER_IDLE_TIMEOUT_MS,
    maxMessage: o.maxMessage ?? DEFAULT_MILTER_MAX_MESSAGE,
    maxMacros: o.maxMacros ?? DEFAULT_MILTER_MAX_MACROS,
    maxHeaders: o.maxHeaders ?? DEFAULT_MILTER_MAX_HEADERS,
    maxRecipients: o.maxRecipients ?? DEFAULT_MILTER_MAX_RECIPIENTS,
  };
  if (o.clientCaName !== undefined) out.clientCaName = o.clientCaName;
  return out;
}
