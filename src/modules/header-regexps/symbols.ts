// Every symbol the header-regexps module can insert, with Rspamd 3.4's score and description
// (rules/regexp/headers.lua; groups as in conf/scores.d/headers_group.conf and conf/groups.conf).
import type { SymbolDef } from '../../plugin-api/index.js';

const h = (score: number, description: string): SymbolDef => ({ score, group: 'headers', description });
const b64 = (score: number, description: string): SymbolDef => ({ score, group: 'excessb64', description });
const qp = (score: number, description: string): SymbolDef => ({ score, group: 'excessqp', description });
const mua = (score: number, description: string): SymbolDef => ({ score, group: 'mua', description });

const SUSPICIOUS_BOUNDARY = 'Suspicious boundary in header Content-Type';
const FORGED_GENERIC = 'Forged generic Received';
const needless = (hdr: string, enc: string): string => `${hdr} that contains encoded characters while ${enc} is not needed as all symbols are 7bit`;

export const HEADER_REGEXP_SYMBOLS: Record<string, SymbolDef> = {
  SUBJECT_NEEDS_ENCODING: h(1.0, 'Subject needs encoding'),
  FROM_EXCESS_BASE64: b64(1.5, needless('From', 'base 64')),
  FROM_EXCESS_QP: qp(1.2, needless('From', 'quoted-printable')),
  TO_EXCESS_BASE64: b64(1.5, needless('To', 'base 64')),
  TO_EXCESS_QP: qp(1.2, needless('To', 'quoted-printable')),
  REPLYTO_EXCESS_BASE64: b64(1.5, needless('Reply-To', 'base 64')),
  REPLYTO_EXCESS_QP: qp(1.2, needless('Reply-To', 'quoted-printable')),
  CC_EXCESS_BASE64: b64(1.5, needless('Cc', 'base 64')),
  CC_EXCESS_QP: qp(1.2, needless('Cc', 'quoted-printable')),
  R_RCVD_SPAMBOTS: h(3.0, 'Spambots signatures in received headers'),
  R_SAJDING: h(8.0, 'Subject seems to be spam'),
  FORGED_OUTLOOK_HTML: h(5.0, 'Forged outlook HTML signature'),
  SORTED_RECIPS: h(3.5, 'Recipients list seems to be sorted'),
  INTRODUCTION: { score: 2.0, group: 'scams', description: 'Sender introduces themselves' },
  TRACKER_ID: h(3.84, 'Spam string at the end of message to make statistics fault'),
  FORGED_MUA_OUTLOOK: mua(3.0, 'Forged outlook MUA'),
  FORGED_OUTLOOK_TAGS: h(2.1, "Message pretends to be send from Outlook but has 'strange' tags"),
  SUSPICIOUS_BOUNDARY: mua(5.0, SUSPICIOUS_BOUNDARY),
  SUSPICIOUS_BOUNDARY2: mua(4.0, SUSPICIOUS_BOUNDARY),
  SUSPICIOUS_BOUNDARY3: mua(3.0, SUSPICIOUS_BOUNDARY),
  SUSPICIOUS_BOUNDARY4: mua(4.0, SUSPICIOUS_BOUNDARY),
  FORGED_MUA_THEBAT_MSGID: mua(4.0, 'Message pretends to be send from The Bat! but has forged Message-ID'),
  FORGED_MUA_THEBAT_MSGID_UNKNOWN: mua(3.0, 'Message pretends to be send from The Bat! but has forged Message-ID'),
  FORGED_MUA_MOZILLA_MAIL_MSGID: mua(4.0, 'Message pretends to be send from Mozilla Mail but has forged Message-ID'),
  FORGED_MUA_MOZILLA_MAIL_MSGID_UNKNOWN: mua(2.5, 'Message pretends to be send from Mozilla Mail but has forged Message-ID'),
  FORGED_MUA_THUNDERBIRD_MSGID: mua(4.0, 'Forged mail pretending to be from Mozilla Thunderbird but has forged Message-ID'),
  FORGED_MUA_THUNDERBIRD_MSGID_UNKNOWN: mua(2.5, 'Forged mail pretending to be from Mozilla Thunderbird but has forged Message-ID'),
  FORGED_MUA_SEAMONKEY_MSGID: mua(4.0, 'Forged mail pretending to be from Mozilla Seamonkey but has forged Message-ID'),
  FORGED_MUA_SEAMONKEY_MSGID_UNKNOWN: mua(2.5, 'Forged mail pretending to be from Mozilla Seamonkey but has forged Message-ID'),
  INVALID_MSGID: h(1.7, 'Message id is incorrect'),
  MIME_HEADER_CTYPE_ONLY: h(2.0, 'Only Content-Type header without other MIME headers'),
  RATWARE_MS_HASH: h(2.0, 'Forged Exchange messages'),
  STOX_REPLY_TYPE: h(1.0, 'Reply-type in content-type'),
  FORGED_MSGID_YAHOO: h(2.0, 'Forged yahoo msgid'),
  FORGED_MUA_THEBAT_BOUN: h(2.0, 'Forged The Bat! MUA headers'),
  RCVD_DOUBLE_IP_SPAM: h(2.0, 'Two received headers with ip addresses'),
  REPTO_QUOTE_YAHOO: h(2.0, 'Quoted reply-to from yahoo (seems to be forged)'),
  FAKE_REPLY_C: { score: 6.0, group: 'subject', description: 'Fake reply (has RE in subject, but has not References header)' },
  MISSING_MIMEOLE: h(2.0, 'Mime-OLE is needed but absent (e.g. fake Outlook or fake Exchange)'),
  RCVD_ILLEGAL_CHARS: h(4.0, 'Header Received has raw illegal character'),
  FORGED_GENERIC_RECEIVED: h(3.6, FORGED_GENERIC),
  FORGED_GENERIC_RECEIVED2: h(3.6, FORGED_GENERIC),
  FORGED_GENERIC_RECEIVED3: h(3.6, FORGED_GENERIC),
  FORGED_GENERIC_RECEIVED4: h(3.6, FORGED_GENERIC),
  FORGED_GENERIC_RECEIVED5: h(4.6, FORGED_GENERIC),
  INVALID_POSTFIX_RECEIVED: h(3.0, 'Invalid Postfix Received'),
  X_PHP_EVAL: h(4.0, "Message sent by eval()'d PHP code"),
  GOOGLE_FORWARDING_MID_MISSING: h(2.5, 'Message was missing Message-ID pre-forwarding'),
  GOOGLE_FORWARDING_MID_BROKEN: h(1.7, 'Message had invalid Message-ID pre-forwarding'),
};
