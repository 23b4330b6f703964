// Every symbol the headers module can insert, with Rspamd 3.4's score, group and description
// (rules/headers_checks.lua, rules/misc.lua, rules/mid.lua, rules/subject_checks.lua,
// rules/regexp/headers.lua, rules/regexp/upstream_spam_filters.lua, rules/forwarding.lua,
// plugins/forged_recipients.lua).
import type { SymbolDef } from '../../plugin-api/index.js';

const h = (score: number, description: string, oneShot?: boolean): SymbolDef =>
  oneShot ? { score, group: 'headers', description, oneShot } : { score, group: 'headers', description };

const fwd = (description: string): SymbolDef => ({ score: 0.0, group: 'forwarding', description });

export const HEADERS_SYMBOLS: Record<string, SymbolDef> = {
  // From / envelope from
  MISSING_FROM: h(2.0, 'Missing From: header'),
  MULTIPLE_FROM: h(9.0, 'Multiple addresses in From'),
  ENVFROM_INVALID: h(2.0, 'Envelope from does not have a valid format'),
  FROM_INVALID: h(2.0, 'From header does not have a valid format'),
  FROM_NO_DN: h(0.0, 'From header does not have a display name'),
  FROM_DN_EQ_ADDR: h(1.0, 'From header display name is the same as the address'),
  FROM_HAS_DN: h(0.0, 'From header has a display name'),
  FROM_NAME_EXCESS_SPACE: h(1.0, 'From header display name contains excess whitespace'),
  FROM_NAME_HAS_TITLE: h(1.0, 'From header display name has a title (Mr/Mrs/Dr)'),
  FROM_EQ_ENVFROM: h(0.0, 'From address is the same as the envelope'),
  FROM_NEQ_ENVFROM: h(0.0, 'From address is different to the envelope'),
  TO_EQ_FROM: h(0.0, 'To address matches the From address'),
  TO_DOM_EQ_FROM_DOM: h(0.0, 'To domain is the same as the From domain'),
  INVALID_FROM_8BIT: h(6.0, 'Invalid 8bit character in From header'),
  R_NO_SPACE_IN_FROM: h(1.0, 'No space in from header'),
  TAGGED_FROM: h(0.0, 'SMTP from has plus tags'),
  TAGGED_RCPT: h(0.0, 'SMTP recipients have plus tags'),
  // Reply-To
  REPLYTO_UNPARSEABLE: h(1.0, 'Reply-To header could not be parsed'),
  HAS_REPLYTO: h(0.0, 'Has Reply-To header'),
  REPLYTO_EQ_FROM: h(0.0, 'Reply-To header is identical to From header'),
  REPLYTO_ADDR_EQ_FROM: h(0.0, 'Reply-To header is identical to SMTP From'),
  REPLYTO_DOM_EQ_FROM_DOM: h(0.0, 'Reply-To domain matches the From domain'),
  REPLYTO_DOM_NEQ_FROM_DOM: h(0.0, 'Reply-To domain does not match the From domain'),
  FREEMAIL_REPLYTO_NEQ_FROM_DOM: h(3.0, 'Freemail From and Reply-To, but to different Freemail services'),
  REPLYTO_DN_EQ_FROM_DN: h(0.0, 'Reply-To display name matches From'),
  REPLYTO_EMAIL_HAS_TITLE: h(2.0, 'Reply-To header has title'),
  REPLYTO_EQ_TO_ADDR: h(5.0, 'Reply-To is the same as the To address'),
  // Recipients
  MISSING_TO: h(2.0, 'To header is missing'),
  RCPT_COUNT_ZERO: h(0.0, 'No recipients'),
  RCPT_COUNT_ONE: h(0.0, 'One recipient'),
  RCPT_COUNT_TWO: h(0.0, 'Two recipients'),
  RCPT_COUNT_THREE: h(0.0, '3-5 recipients'),
  RCPT_COUNT_FIVE: h(0.0, '5-7 recipients'),
  RCPT_COUNT_SEVEN: h(0.0, '7-11 recipients'),
  RCPT_COUNT_TWELVE: h(0.0, '12-50 recipients'),
  RCPT_COUNT_GT_50: h(0.0, '50+ recipients'),
  TO_DN_RECIPIENTS: h(2.0, 'To header display name is "Recipients"'),
  TO_DN_NONE: h(0.0, 'None of the recipients have display names'),
  TO_DN_ALL: h(0.0, 'All the recipients have display names'),
  TO_DN_SOME: h(0.0, 'Some of the recipients have display names'),
  TO_DN_EQ_ADDR_ALL: h(0.0, 'All of the recipients have display names that are the same as their address'),
  TO_DN_EQ_ADDR_SOME: h(0.0, 'Some of the recipients have display names that are the same as their address'),
  TO_MATCH_ENVRCPT_ALL: h(0.0, 'All of the recipients match the envelope'),
  TO_MATCH_ENVRCPT_SOME: h(0.0, 'Some of the recipients match the envelope'),
  INVALID_RCPT_8BIT: h(6.0, 'Invalid 8bit character in recipients headers'),
  // Date
  MISSING_DATE: h(1.0, 'Message date is missing'),
  INVALID_DATE: h(1.5, 'Malformed date header'),
  DATE_IN_FUTURE: h(4.0, 'Message date is in future'),
  DATE_IN_PAST: h(1.0, 'Message date is in past'),
  // Message-ID
  MISSING_MID: h(2.5, 'Message id is missing'),
  MID_BARE_IP: { score: 2.0, group: 'mid', description: 'Message-ID RHS is a bare IP address' },
  MID_RHS_NOT_FQDN: { score: 0.5, group: 'mid', description: 'Message-ID RHS is not a fully-qualified domain name' },
  MID_MISSING_BRACKETS: { score: 0.5, group: 'mid', description: "Message-ID is missing <>'s" },
  MID_RHS_IP_LITERAL: { score: 0.5, group: 'mid', description: 'Message-ID RHS is an IP-literal' },
  MID_CONTAINS_FROM: { score: 1.0, group: 'mid', description: 'Message-ID contains From address' },
  MID_RHS_MATCH_FROM: { score: 0.0, group: 'mid', description: 'Message-ID RHS matches From domain' },
  MID_RHS_MATCH_FROMTLD: { score: 0.0, group: 'mid', description: 'Message-ID RHS matches From domain tld' },
  MID_CONTAINS_TO: { score: 1.0, group: 'mid', description: 'Message-ID contains To address' },
  MID_RHS_MATCH_TO: { score: 1.0, group: 'mid', description: 'Message-ID RHS matches To domain' },
  // Structure
  MULTIPLE_UNIQUE_HEADERS: h(7.0, 'Repeated unique headers', true),
  BROKEN_HEADERS: h(10.0, 'Headers structure is likely broken'),
  MISSING_MIME_VERSION: h(2.0, 'MIME-Version header is missing in MIME message'),
  R_BAD_CTE_7BIT: h(3.5, 'Detects bad content-transfer-encoding for text parts'),
  R_MISSING_CHARSET: h(0.5, 'Charset is missing in a message'),
  // Subject
  MISSING_SUBJECT: h(2.0, 'Subject header is missing'),
  EMPTY_SUBJECT: h(1.0, 'Subject header is empty'),
  SUBJ_ALL_CAPS: { score: 3.0, group: 'subject', description: 'All capital letters in subject' },
  LONG_SUBJ: { score: 3.0, group: 'subject', description: 'Subject is too long' },
  FAKE_REPLY: h(1.0, 'Fake reply'),
  // Spoofing and oddities
  FROM_NEQ_DISPLAY_NAME: h(4.0, 'Display name contains an email address different to the From address'),
  SPOOF_DISPLAY_NAME: h(8.0, 'Display name is being used to spoof and trick the recipient'),
  SPOOF_REPLYTO: h(6.0, 'Reply-To is being used to spoof and trick the recipient to send an off-domain reply'),
  HEADER_RCONFIRM_MISMATCH: h(2.0, 'Read confirmation address is different to from address'),
  HEADER_FORGED_MDN: h(2.0, 'Read confirmation address is different to return path'),
  R_UNDISC_RCPT: h(3.0, 'Recipients are absent or undisclosed'),
  MV_CASE: h(0.5, 'Mime-Version .vs. MIME-Version'),
  XM_CASE: h(0.5, 'X-mailer .vs. X-Mailer'),
  // Envelope against headers (plugins/forged_recipients.lua; scores from scores.d/headers_group.conf)
  FORGED_SENDER: h(0.3, 'Sender is forged (different From: header and smtp MAIL FROM: addresses)'),
  FORGED_RECIPIENTS: h(2.0, 'Recipients are not the same as RCPT TO: mail command'),
  // Tagged envelope senders (rules/misc.lua), read by the FORGED_SENDER_VERP_SRS composite
  ENVFROM_PRVS: h(0.0, 'Envelope From is a PRVS address that matches the From address'),
  ENVFROM_VERP: h(0.0, 'Envelope From is a VERP address'),
  // Forwarding (rules/forwarding.lua): score 0, read by the *_FORWARDING composites as g:forwarding
  FWD_GOOGLE: fwd('Message was forwarded by Google'),
  FWD_YANDEX: fwd('Message was forwarded by Yandex'),
  FWD_MAILRU: fwd('Message was forwarded by Mail.ru'),
  FWD_SRS: fwd('Message was forwarded using Sender Rewriting Scheme (SRS)'),
  FORWARDED: fwd('Message was forwarded'),
  // Misc header facts
  HAS_LIST_UNSUB: h(-0.01, 'Has List-Unsubscribe header'),
  HAS_X_PRIO_ZERO: h(0.0, 'Message has X-Priority header set to 0'),
  HAS_X_PRIO_ONE: h(0.0, 'Message has X-Priority header set to 1'),
  HAS_X_PRIO_TWO: h(0.0, 'Message has X-Priority header set to 2'),
  HAS_X_PRIO_THREE: h(0.0, 'Message has X-Priority header set to 3 or 4'),
  HAS_X_PRIO_FIVE: h(0.0, 'Message has X-Priority header set to 5 or higher'),
  SPAM_FLAG: { score: 5.0, group: 'upstream_spam_filters', description: 'Message was already marked as spam' },
};
