// Rspamd 3.4's header regexp rules (rules/regexp/headers.lua), each a predicate over the message.
// The regexps keep Rspamd's meaning; they are written here for JavaScript's engine.
import type { Task } from '../../plugin-api/index.js';
import {
  afterLines,
  all,
  any,
  bodyText,
  encodedWordStart,
  exists,
  hasHtmlPart,
  hdr,
  htmlTag,
  not,
  onlyHtml,
  openedAndClosedBy,
  rawHdr,
  recipientsDistant,
  recipientsSorted,
  trackerOnlyPart,
  trimAsciiEnd,
  rspamdHdr,
  type Matcher,
  type Pred,
} from './predicates.js';

/** 8-bit or control bytes: a value with them needs MIME encoding, one without does not. */
const NEEDS_MIME = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\uffff]/;
const B64_WORD = encodedWordStart('B');
const QP_WORD = encodedWordStart('Q');

/**
 * /<mailto:(?:leave-\S+|\S+-unsubscribe)@\S+>$/ written out. Everything from `<mailto:` to the end
 * is non-blank, so only the value's last run of non-blanks can hold a match, and its first
 * `<mailto:` (or `<mailto:leave-`) does best, as does the last `-unsubscribe@` or `@` after it;
 * the regexp retried from every `<mailto:` to the end.
 */
export const LEAVE_OR_UNSUBSCRIBE: Matcher = {
  test(value) {
    if (!value.endsWith('>')) return false;
    const run = value.slice(value.search(/\S+$/));
    const start = run.indexOf('<mailto:');
    if (start < 0) return false;
    const end = run.length - 1;
    const leave = run.indexOf('<mailto:leave-', start);
    if (leave >= 0 && run.lastIndexOf('@', end - 2) >= leave + 15) return true;
    const unsub = run.lastIndexOf('-unsubscribe@', end - 14);
    return unsub >= start + 9;
  },
};

/** Raw 8-bit or control bytes in a value with no encoded word (SUBJECT_NEEDS_ENCODING and kin). */
const needsEncoding = (name: string): Pred => all(not(rawHdr(name, B64_WORD)), not(rawHdr(name, QP_WORD)), rawHdr(name, NEEDS_MIME));

/** Raw value is encoded although the decoded one is plain 7-bit (FROM_EXCESS_BASE64 and kin). */
const excess = (name: string, word: Matcher): Pred => all(rawHdr(name, word), not(hdr(name, NEEDS_MIME)));

const yahooBulk = hdr('Received', /from \[\S+\] by \S+\.(?:groups|scd|dcn)\.yahoo\.com with NNFMP/);
const outlookMua = hdr('X-Mailer', /^Microsoft Outlook\b/);

// Message-ID shapes that real Outlook, Hotmail and list software produce.
const oeMsgid1 = hdr('Message-Id', /^<?[A-Za-z0-9-]{7}[A-Za-z0-9]{20}@hotmail\.com>?$/m);
const oeMsgid2 = hdr('Message-Id', /^<?(?:[0-9a-f]{8}|[0-9a-f]{12})\$[0-9a-f]{8}\$[0-9a-f]{8}@\S+>?$/);
const unusableMsgid = any(
  hdr('List-Unsubscribe', LEAVE_OR_UNSUBSCRIBE),
  hdr('Received', /\/CWT\/DCE\)/),
  hdr('Received', /iPlanet Messaging Server/),
  hdr('Message-Id', /^<?BAY\d+-DAV\d+[A-Z0-9]{25}@phx\.gbl?>$/),
  hdr('Message-Id', /^<?BAYC\d+-PASMTP\d+[A-Z0-9]{25}@CEZ\.ICE>?$/),
  hdr('Message-ID', /^<mailman\.\d+\.\d+\.\d+\..+@\S+>$/),
);
const forgedOe = all(hdr('X-Mailer', /\bOutlook Express [456]\./), not(oeMsgid1), not(oeMsgid2), not(unusableMsgid));
const vistaMsgid = hdr('Message-Id', /^<?[A-F\d]{32}@\S+>?$/);
const forgedOutlookDollars = all(
  hdr('X-Mailer', /^Microsoft Outlook(?: 8| CWS, Build 9|, Build 10)\./),
  not(oeMsgid2),
  not(hdr('Message-Id', /^<?!~!>?/)),
  not(vistaMsgid),
  not(hdr('Message-Id', /^<?[A-F\d]{36,40}@\S+>?$/)),
  not(unusableMsgid),
);

const thebatAny = hdr('X-Mailer', /^\s*The Bat!/);
const thebatMsgidCommon = hdr('Message-ID', /^<?\d+\.\d+@\S+>?$/m);
const thebatMsgid = hdr('Message-ID', /^<?\d+\.(19[789]\d|20\d\d)(0\d|1[012])([012]\d|3[01])([0-5]\d)([0-5]\d)([0-5]\d)@\S+>?/m);

const uaMozilla5 = hdr('User-Agent', /^\s*Mozilla\/5\.0/);
const uaThunderbird = hdr('User-Agent', /^\s*(Thunderbird|Mozilla Thunderbird|Mozilla\/.*Gecko\/.*Thunderbird\/)/);
const uaSeamonkey = hdr('User-Agent', /^\s*Mozilla\/5\.0\s.+\sSeaMonkey\/\d+\.\d+/);
const uaMozilla = all(uaMozilla5, not(uaThunderbird), not(uaSeamonkey));
const mozMsgidCommon = hdr('Message-ID', /^\s*<[\dA-F]{8}\.\d{1,7}@([^>.]+\.)+[^>.]+>$/);
const mozMsgidCommonSec = hdr('Message-ID', /^\s*<[\da-f]{8}-([\da-f]{4}-){3}[\da-f]{12}@([^>.]+\.)+[^>.]+>$/);
const mozMsgid = hdr('Message-ID', /^\s*<(3[3-9A-F]|4[\dA-F]|5[\dA-F])[\dA-F]{6}\.(\d0){1,4}\d@([^>.]+\.)+[^>.]+>$/);

const fromYahoo = hdr('From', /@yahoo\.com\b/i);
const atYahooMsgid = hdr('Message-Id', /@yahoo\.com\b/i);

// Mailers that send a Re: subject without In-Reply-To but should carry References.
const noInrYesRef = any(
  hdr('X-Mailer', /^Gnus v/),
  hdr('X-Mailer', /^Microsoft Outlook Express 5/),
  hdr('X-Mailer', /^Microsoft Outlook Express 6/),
  hdr('X-Mailer', /^Mozilla 4/),
  hdr('X-Mailer', /^SKYRiXgreen/),
  hdr('X-Mailer', /^WWW-Mail \d/),
  hdr('User-Agent', /^Gnus/),
  hdr('User-Agent', /^KNode/),
  hdr('User-Agent', /^Mutt/),
  hdr('User-Agent', /^Pan/),
  hdr('User-Agent', /^Xnews/),
);

// Subject punctuation (Rspamd's SUBJECT_ENDS_* / SUBJECT_HAS_*). `/!\s*$/` and `/\s+$/` are
// written as a look at the value's end: as regexps they retried from every blank of a long run.
const endsExclaim = (v: string): boolean => trimAsciiEnd(v).endsWith('!');
// `/\?\s*$/u`: Unicode blanks, which String.trimEnd removes (the same set as `\s` with `u`).
const endsQuestion = (v: string): boolean => v.trimEnd().endsWith('?');

// Mail clients whose X-Mailer spammers still forge: releases from before about 2006 (Outlook
// Express, Eudora 1-6, The Bat! 1-2, Outlook 2000/2002) and very old iOS builds.
const OLD_X_MAILER = /^(?:Microsoft Outlook Express|QUALCOMM Windows Eudora (Pro )?Version [1-6]\.|The Bat! \(v[12]\.|Microsoft Outlook IMO, Build 9\.0\.|Microsoft Outlook, Build 10\.|i(Phone|Pad) Mail \((?:[1-8][A-L]|12H|13E))/;
// X-Mailer values no real client sends: the header name repeated, Thunderbird (which writes
// User-Agent), eGroups, and an iPhone/iPad Mail without an iOS build number.
const BAD_X_MAILER = /^(?:X-Mailer: |(?:Mozilla )?Thunderbird \d|eGroups Message Poster|i(?:Phone|Pad) Mail)/;
const APPLE_IOS_X_MAILER = /^i(?:Phone|Pad) Mail \((?:1[AC]|[34][AB]|5[ABCFGH]|7[A-E]|8[ABCEFGHJKL]|9[AB]|\d{2}[A-Z])\d+[a-z]?\)/;

const CURRENCY = /\p{Sc}/u;
/** Exchange 5.5's own hop, often folded before `(5.5…`, which Rspamd reads as one space. */
const EXCHANGE_55_HOP = /^by \S+ with Internet Mail Service \(5\./;

/** Envelope senders that are web-server or anonymous accounts (Rspamd compromised_hosts.lua). */
const SERVICE_ACCOUNT = /^(?:www-data|anonymous|ftp|apache|nobody|guest|nginx|web|www)@/i;

/** A link path with a `/wp-…/` segment (Rspamd's `/\/wp-[^\/]+\//Ui` over every URL). */
const WP_PATH = /\/wp-[^/]+\//i;
const hasWpUri: Pred = (task) => task.message.urls.some((u) => WP_PATH.test(u.url));

export const DATE_TAIL = String.raw`\w{3}, \d+ \w{3} 20\d\d \d\d:\d\d:\d\d [+-]\d\d\d0`;

/** A header whose value as Rspamd reads it (folds as one space, trailing blanks kept) matches `re`. */
const rspamdRe = (name: string, re: RegExp): Pred => rspamdHdr(name, (v) => re.test(v));

/**
 * Some header of that name has nothing between its colon and its value (`From:a@b`): Rspamd's
 * `empty_separator`, set unless a space or a tab follows the colon (a fold right after it counts
 * as empty too).
 */
const emptyDelimiter = (name: string): Pred => (task) => task.message.headers.get(name).some((h) => h.raw[0] !== ' ' && h.raw[0] !== '\t');

// Web-mail and accounting-software signatures: the mailer's X-Mailer together with the hand-off
// Received line its web front end writes. Scored 0: the *_BASE64 and _CTYPE_MIXED_BOGUS
// composites use them to take back what these mailers' habits (needless base64, multipart/mixed
// without an attachment) cost elsewhere.
const IPV4_LITERAL = String.raw`\[\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\]`;
const MAIL_RU_MAILER = all(
  rspamdRe('X-Mailer', /^Mail\.Ru Mailer 1\.0$/),
  rspamdRe('Received', new RegExp(String.raw`^(?:from ${IPV4_LITERAL} )?by e\.mail\.ru with HTTP;`)),
);
const YANDEX_RU_MAILER = all(
  rspamdRe('X-Mailer', /^Yamail \[ http:\/\/yandex\.ru \] 5\.0$/),
  rspamdRe('Received', /^by web\d{1,2}[a-z]\.yandex\.ru with HTTP;/),
);

/** Rule name → predicate. Scores, groups and descriptions are in symbols.ts. */
export const HEADER_REGEXP_RULES: Record<string, Pred> = {
  SUBJECT_NEEDS_ENCODING: needsEncoding('Subject'),
  FROM_NEEDS_ENCODING: needsEncoding('From'),
  TO_NEEDS_ENCODING: needsEncoding('To'),
  FROM_EXCESS_BASE64: excess('From', B64_WORD),
  FROM_EXCESS_QP: excess('From', QP_WORD),
  TO_EXCESS_BASE64: excess('To', B64_WORD),
  TO_EXCESS_QP: excess('To', QP_WORD),
  REPLYTO_EXCESS_BASE64: excess('Reply-To', B64_WORD),
  REPLYTO_EXCESS_QP: excess('Reply-To', QP_WORD),
  CC_EXCESS_BASE64: excess('Cc', B64_WORD),
  CC_EXCESS_QP: excess('Cc', QP_WORD),
  SUBJ_EXCESS_BASE64: excess('Subject', B64_WORD),
  SUBJ_EXCESS_QP: excess('Subject', QP_WORD),
  R_RCVD_SPAMBOTS: hdr('Received', /^from \[\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\] by [-.\w+]{5,255}; [SMTWF][a-z][a-z], [\s\d]?\d [JFMAJSOND][a-z][a-z] \d{4} \d{2}:\d{2}:\d{2} [-+]\d{4}$/m),
  R_SAJDING: hdr('Subject', /\bsajding(?:om|a)?\b/i),
  FORGED_OUTLOOK_HTML: all(not(yahooBulk), outlookMua, onlyHtml),
  SORTED_RECIPS: recipientsSorted,
  SUSPICIOUS_RECIPS: recipientsDistant,
  TRACKER_ID: trackerOnlyPart(/^[a-z0-9]{6,24}[-_a-z0-9]{12,36}[a-z0-9]{6,24}\s*$/i),
  FORGED_MUA_OUTLOOK: all(
    any(forgedOe, forgedOutlookDollars),
    not(hdr('X-Mailer', /^Microsoft Outlook, Build 10\.0\.3416$/)),
    not(hdr('X-Mailer', /^Microsoft Outlook Express 6\.00\.3790\.3959$/)),
    not(vistaMsgid),
  ),
  FORGED_OUTLOOK_TAGS: all(not(yahooBulk), outlookMua, hasHtmlPart, not(all(htmlTag('html'), htmlTag('head'), htmlTag('meta'), htmlTag('body')))),
  SUSPICIOUS_BOUNDARY: rawHdr('Content-Type', /^\s*multipart.+boundary="----=_NextPart_000_[A-Z\d]{4}_(00EBFFA4|0102FFA4|32C6FFA4|3302FFA4)\.[A-Z\d]{8}"[\r\n]*$/is),
  SUSPICIOUS_BOUNDARY2: rawHdr('Content-Type', /^\s*multipart.+boundary="----=_NextPart_000_[A-Z\d]{4}_(01C6527E)\.[A-Z\d]{8}"[\r\n]*$/is),
  SUSPICIOUS_BOUNDARY3: rawHdr('Content-Type', /^\s*multipart.+boundary="-----000-00\d\d-01C[\dA-F]{5}-[\dA-F]{8}"[\r\n]*$/is),
  SUSPICIOUS_BOUNDARY4: all(
    rawHdr('Content-Type', /^\s*multipart.+boundary="----=_NextPart_000_[A-Z\d]{4}_01C4[\dA-F]{4}\.[A-Z\d]{8}"[\r\n]*$/is),
    hdr('Date', /^\s*\w\w\w,\s+\d+\s+\w\w\w 20(0[56789]|1\d)/),
  ),
  FORGED_MUA_THEBAT_MSGID: all(thebatAny, not(thebatMsgid), thebatMsgidCommon, not(unusableMsgid)),
  FORGED_MUA_THEBAT_MSGID_UNKNOWN: all(thebatAny, not(thebatMsgid), not(thebatMsgidCommon), not(unusableMsgid)),
  FORGED_MUA_MOZILLA_MAIL_MSGID: all(uaMozilla, mozMsgidCommon, not(mozMsgid), not(unusableMsgid)),
  FORGED_MUA_MOZILLA_MAIL_MSGID_UNKNOWN: all(uaMozilla, not(mozMsgidCommon), not(mozMsgid), not(unusableMsgid)),
  FORGED_MUA_THUNDERBIRD_MSGID: all(uaThunderbird, mozMsgidCommon, not(mozMsgid), not(unusableMsgid)),
  FORGED_MUA_THUNDERBIRD_MSGID_UNKNOWN: all(uaThunderbird, not(any(mozMsgidCommon, mozMsgidCommonSec)), not(mozMsgid), not(unusableMsgid)),
  FORGED_MUA_SEAMONKEY_MSGID: all(uaSeamonkey, mozMsgidCommon, not(mozMsgid), not(unusableMsgid)),
  FORGED_MUA_SEAMONKEY_MSGID_UNKNOWN: all(uaSeamonkey, not(mozMsgidCommon), not(mozMsgid), not(unusableMsgid)),
  INVALID_MSGID: all(
    exists('Message-Id'),
    // /\(.*\)/ as written; `[^()…]*` finds the same pairs without rescanning from every `(`.
    not(any(hdr('Message-Id', /^<?[^<>\\ \t\n\r\x0b\x80-\xff]+@[^<>\\ \t\n\r\x0b\x80-\xff]+>?\s*$/), hdr('Message-Id', /\([^()\n\r\u2028\u2029]*\)/))),
  ),
  MIME_HEADER_CTYPE_ONLY: (task) => {
    const h = task.message.headers;
    if (h.has('Content-Disposition') || h.has('Content-Transfer-Encoding') || !h.has('Content-Type') || h.has('MIME-Version')) return false;
    // Rspamd's content_type_is_type/subtype look at every part: any text/plain part clears the rule.
    return !task.message.parts.some((p) => p.contentType.type === 'text/plain');
  },
  RATWARE_MS_HASH: all(
    // Tried from the start of a hex run only: from inside one it fails the same way (quadratic).
    hdr('Message-Id', /(?<![0-9a-f])[0-9a-f]{4,}\$[0-9a-f]{4,}\$[0-9a-f]{4,}@\S+/),
    not(hdr('X-MimeOLE', /^Produced By Microsoft MimeOLE/)),
    not(hdr('Received', /with Microsoft Exchange Server/)),
  ),
  STOX_REPLY_TYPE: hdr('Content-Type', /text\/plain; .* reply-type=original/),
  FORGED_MSGID_YAHOO: all(atYahooMsgid, not(fromYahoo)),
  FORGED_MUA_THEBAT_BOUN: all(
    hdr('X-Mailer', /^The Bat! \(v1\./),
    hdr('Content-Type', /boundary/i),
    not(hdr('Content-Type', /boundary="?-{10}/)),
    not(hdr('X-Mailman-Version', /\d/)),
  ),
  RCVD_DOUBLE_IP_SPAM: any(
    hdr('Received', /from \[\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\] by \d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3} with/),
    hdr('Received', /from\s+\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\s+by\s+\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3};/),
  ),
  // /".*"\s*</: the last quote before `"\s*<` will do, so `[^"…]*` matches the same values linearly.
  REPTO_QUOTE_YAHOO: all(hdr('Reply-To', /"[^"\n\r\u2028\u2029]*"\s*</), any(fromYahoo, atYahooMsgid)),
  FAKE_REPLY_C: all(hdr('Subject', /^R[eE]:/), not(exists('References')), noInrYesRef, not(hdr('X-Mailer', /^Microsoft Outlook Express 6/))),
  MISSING_MIMEOLE: all(
    exists('X-MSMail-Priority'),
    not(exists('X-MimeOLE')),
    not(hdr('X-Mailer', /SquirrelMail\b/)),
    not(hdr('X-Mailer', /^Microsoft (?:Office )?Outlook 1[245]\.0/)),
  ),
  RCVD_ILLEGAL_CHARS: rawHdr('Received', /[\x80-\xff]/),
  // Rspamd's /^\s*(.+\n)*X/ and /\s*from \[(ip)\].*\n(.+\n)*\s*from \1 by …$/, written out in
  // predicates.ts: as regexps they backtracked over every line (seconds per 64 KiB value).
  FORGED_GENERIC_RECEIVED: rawHdr('Received', afterLines(new RegExp(String.raw`from \[\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\] by (([\w\d-]+\.)+[a-zA-Z]{2,6}|\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}); ${DATE_TAIL}`))),
  FORGED_GENERIC_RECEIVED2: rawHdr('Received', afterLines(new RegExp(String.raw`from \[\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\] by ([\w\d-]+\.)+[a-z]{2,6} id [\w\d]{12}; ${DATE_TAIL}`))),
  FORGED_GENERIC_RECEIVED3: rawHdr('Received', afterLines(new RegExp(String.raw`by \d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3} with SMTP id [a-zA-Z]{14}\.\d{13};[\r\n\s]*${DATE_TAIL} \(GMT\)`))),
  FORGED_GENERIC_RECEIVED4: rawHdr('Received', afterLines(new RegExp(String.raw`from localhost by \S+;\s+${DATE_TAIL}[\s\r\n]*$`))),
  FORGED_GENERIC_RECEIVED5: rawHdr('Received', openedAndClosedBy(new RegExp(String.raw`^from (\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}) by \S+;\s+${DATE_TAIL}$`))),
  INVALID_POSTFIX_RECEIVED: rawHdr('Received', / \(Postfix\) with ESMTP id [A-Z\d]+([\s\r\n]+for <\S+?>)?;[\s\r\n]*[A-Z][a-z]{2}, \d{1,2} [A-Z][a-z]{2} \d\d\d\d \d\d:\d\d:\d\d [+-]\d\d\d\d$/),
  // Rspamd rules/regexp/misc.lua: the sender introduces itself by name or title.
  INTRODUCTION: bodyText(/\b(?:my name is\b|(?:i am|this is)\s+(?:mr|mrs|ms|miss|master|sir|prof(?:essor)?|d(?:octo)?r|rev(?:erend)?)(?:\.|\b))/i),
  X_PHP_EVAL: rawHdr('X-PHP-Originating-Script', / : eval\(\)'d code$/),
  // PHP's mail() names the script as `uid:file`: a leading 0 or a seven-digit uid is made up.
  X_PHP_FORGED_0X: rawHdr('X-PHP-Originating-Script', /^0\d/),
  X_PHPOS_FAKE: hdr('X-PHP-Originating-Script', /^\d{7}:/i),
  GOOGLE_FORWARDING_MID_MISSING: rawHdr('Message-ID', /SMTPIN_ADDED_MISSING@mx\.google\.com>$/),
  GOOGLE_FORWARDING_MID_BROKEN: rawHdr('Message-ID', /SMTPIN_ADDED_BROKEN@mx\.google\.com>$/),
  CTE_CASE: rawHdr('Content-Transfer-Encoding', /^[78]B/),
  CT_EXTRA_SEMI: rawHdr('Content-Type', /;$/),
  SUBJECT_ENDS_EXCLAIM: rspamdHdr('Subject', endsExclaim),
  SUBJECT_HAS_EXCLAIM: all(hdr('Subject', /!/), not(rspamdHdr('Subject', endsExclaim))),
  SUBJECT_ENDS_QUESTION: rspamdHdr('Subject', endsQuestion),
  SUBJECT_HAS_QUESTION: all(hdr('Subject', /\?/), not(rspamdHdr('Subject', endsQuestion))),
  SUBJECT_HAS_CURRENCY: rspamdHdr('Subject', (v) => CURRENCY.test(v)),
  SUBJECT_ENDS_SPACES: rspamdHdr('Subject', (v) => v.length > 0 && trimAsciiEnd(v).length < v.length),
  HAS_ORG_HEADER: any(exists('Organization'), exists('Organisation')),
  HAS_XOIP: exists('X-Originating-IP'),
  // No X-Mailer or User-Agent names a web page, and one of them has no digit at all.
  XM_UA_NO_VERSION: all(
    not(hdr('X-Mailer', /https?:/)),
    not(hdr('User-Agent', /https?:/)),
    any(hdr('X-Mailer', /^[^0-9]+$/), hdr('User-Agent', /^[^0-9]+$/)),
  ),
  OLD_X_MAILER: hdr('X-Mailer', OLD_X_MAILER),
  FORGED_X_MAILER: all(hdr('X-Mailer', BAD_X_MAILER), not(hdr('X-Mailer', APPLE_IOS_X_MAILER))),
  // Exchange 5.5 still exists; its own Received line names the same mailer.
  FORGED_IMS: all(hdr('X-Mailer', /^Internet Mail Service \(5\./), not(rspamdHdr('Received', (v) => EXCHANGE_55_HOP.test(v)))),
  // upstream_spam_filters.lua
  PRECEDENCE_BULK: hdr('Precedence', /bulk/i),
  // compromised_hosts.lua: signs of mail sent by a web script on a (possibly hacked) host.
  HAS_PHPMAILER_SIG: any(hdr('X-Mailer', /^PHPMailer /), hdr('Content-Type', /boundary="b1_[0-9a-zA-Z]+"/)),
  HAS_X_POS: exists('X-PHP-Originating-Script'),
  HAS_X_PHP_SCRIPT: exists('X-PHP-Script'),
  HAS_X_AS: exists('X-Authenticated-Sender'),
  HAS_X_ANTIABUSE: exists('X-AntiAbuse'),
  HAS_XAW: exists('X-Authentication-Warning'),
  HAS_WP_URI: hasWpUri,
  MID_RHS_WWW: hdr('Message-Id', /@www\./i),
  ENVFROM_SERVICE_ACCT: (task) => SERVICE_ACCOUNT.test(task.envelopeFrom?.address ?? ''),
  MAIL_RU_MAILER,
  YANDEX_RU_MAILER,
  MAILER_1C_8: rspamdRe('X-Mailer', /^1C:Enterprise 8\.[23]$/),
  // A bulk MTA's hand-off line: `from strongmail ([ip]) by host (-); date`.
  STRONGMAIL: rspamdRe('Received', new RegExp(String.raw`^from\s+strongmail\s+\(${IPV4_LITERAL}\) by \S+ \(-\); `)),
  HEADER_FROM_EMPTY_DELIMITER: emptyDelimiter('From'),
  HEADER_TO_EMPTY_DELIMITER: emptyDelimiter('To'),
  HEADER_CC_EMPTY_DELIMITER: emptyDelimiter('Cc'),
  HEADER_REPLYTO_EMPTY_DELIMITER: emptyDelimiter('Reply-To'),
  HEADER_DATE_EMPTY_DELIMITER: emptyDelimiter('Date'),
};

/** After `host: user` in X-Authenticated-Sender: the first colon with text before it and a blank after. */
const AUTH_SENDER = /[^:]:[ \t\n\v\f\r]([\s\S]+)$/;

/**
 * Rules that name what they found as the symbol's option, asked once the rule matched:
 * HAS_X_AS gives the authenticated user of the first X-Authenticated-Sender (Rspamd's callback).
 */
export const HEADER_REGEXP_OPTIONS: Record<string, (task: Task) => string | undefined> = {
  HAS_X_AS: (task) => {
    const value = task.message.headers.first('X-Authenticated-Sender')?.value ?? '';
    return AUTH_SENDER.exec(value)?.[1];
  },
};
