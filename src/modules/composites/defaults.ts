// Rspamd 3.4's default composites (conf/composites.conf) as data: the ones whose every atom a
// mailsift module can insert (test/modules/dead-defaults.test.ts fails on an atom nothing
// produces). Left out until something produces their atoms, so that they could fire:
//   BOUNCE_NO_AUTH (BOUNCE, SUBJ_BOUNCE_WORDS); COMPROMISED_ACCT_BULK, UNDISC_RCPTS_BULK (DCC).
// Not added yet although both atoms exist: RBL_SPAMHAUS_XBL_ANY (4.0 in scores.d/rbl_group.conf).
import type { CompositeDef } from '../../plugin-api/index.js';

type Def = Omit<CompositeDef, 'name'>;

export const DEFAULT_COMPOSITES: Record<string, Def> = {
  // Envelope against headers (FORGED_* from the headers module's forged_recipients check): a
  // list or a forwarder rewrites the envelope by design. The _MAILLIST pair hides the FORGED_*
  // symbol (default policy; `-MAILLIST` keeps MAILLIST), the _FORWARDING pair only takes its
  // weight. Scores and groups as Rspamd's composites.conf and scores.d/headers_group.conf.
  FORGED_RECIPIENTS_MAILLIST: {
    expression: 'FORGED_RECIPIENTS & -MAILLIST',
    score: 0.0,
    group: 'headers',
    description: 'Recipients are not the same as RCPT TO: mail command, but a message from a maillist',
  },
  FORGED_SENDER_MAILLIST: {
    expression: 'FORGED_SENDER & -MAILLIST',
    score: 0.0,
    group: 'headers',
    description: 'Sender is not the same as MAIL FROM: envelope, but a message is from a maillist',
  },
  FORGED_SENDER_FORWARDING: { expression: 'FORGED_SENDER & g:forwarding', description: 'Forged sender, but message is forwarded', policy: 'remove_weight' },
  FORGED_RECIPIENTS_FORWARDING: { expression: 'FORGED_RECIPIENTS & g:forwarding', policy: 'remove_weight' },
  SPF_FAIL_FORWARDING: { expression: 'g:forwarding & (R_SPF_SOFTFAIL | R_SPF_FAIL)', policy: 'remove_weight' },
  // A tagged return path (BATV, VERP) differs from From by design: the default policy drops
  // FORGED_SENDER with its weight. No score in Rspamd (0).
  FORGED_SENDER_VERP_SRS: { expression: 'FORGED_SENDER & (ENVFROM_PRVS | ENVFROM_VERP)', score: 0.0 },
  // End of the envelope/forwarding block.
  DMARC_POLICY_ALLOW_WITH_FAILURES: { expression: 'DMARC_POLICY_ALLOW & (R_SPF_SOFTFAIL | R_SPF_FAIL | R_DKIM_REJECT)', policy: 'remove_weight' },
  FORGED_MUA_MAILLIST: { expression: 'g:mua & -MAILLIST' },
  // Web mailers that encode in base64 what needs no encoding, or send multipart/mixed without an
  // attachment: the default policy drops the mailer's symbol and the penalties it explains
  // (HAS_ATTACHMENT, prefixed `-`, stays). No score in Rspamd (0).
  MAIL_RU_MAILER_BASE64: {
    expression: 'MAIL_RU_MAILER & (FROM_EXCESS_BASE64 | MIME_BASE64_TEXT | REPLYTO_EXCESS_BASE64 | SUBJ_EXCESS_BASE64 | TO_EXCESS_BASE64)',
    score: 0.0,
  },
  YANDEX_RU_MAILER_CTYPE_MIXED_BOGUS: { expression: 'YANDEX_RU_MAILER & -HAS_ATTACHMENT & CTYPE_MIXED_BOGUS', score: 0.0 },
  MAILER_1C_8_BASE64: {
    expression: 'MAILER_1C_8 & (FROM_EXCESS_BASE64 | MIME_BASE64_TEXT | SUBJ_EXCESS_BASE64 | TO_EXCESS_BASE64)',
    description: "Message was sent by '1C:Enterprise 8' and uses base64 encoded data",
    score: 0.0,
  },
  AUTH_NA: {
    expression: 'R_DKIM_NA & R_SPF_NA & DMARC_NA & ARC_NA',
    score: 1.0,
    policy: 'remove_weight',
    description: 'Authenticating message via SPF/DKIM/DMARC/ARC not available',
  },
  AUTH_NA_OR_FAIL: {
    expression: '!(R_DKIM_NA & R_SPF_NA & DMARC_NA & ARC_NA) & (R_DKIM_NA | R_DKIM_TEMPFAIL | R_DKIM_PERMFAIL) & (R_SPF_NA | R_SPF_DNSFAIL) & DMARC_NA & (ARC_NA | ARC_DNSFAIL)',
    score: 1.0,
    policy: 'remove_weight',
    description: 'No authenticating method SPF/DKIM/DMARC/ARC was successful',
  },
  DKIM_MIXED: { expression: '-R_DKIM_ALLOW & (R_DKIM_TEMPFAIL | R_DKIM_PERMFAIL | R_DKIM_REJECT)', policy: 'remove_weight' },
  RCVD_UNAUTH_PBL: {
    // Rspamd 3.4 names RECEIVED_PBL, which its rbl module no longer inserts: the received-hop
    // PBL result is RECEIVED_SPAMHAUS_PBL.
    expression: 'RECEIVED_SPAMHAUS_PBL & !RCVD_VIA_SMTP_AUTH',
    description: 'Relayed through ZEN PBL IP without sufficient authentication (possible indicating an open relay)',
    score: 2.0,
    policy: 'leave',
  },
  RCVD_DKIM_ARC_DNSWL_MED: {
    expression: '(R_DKIM_ALLOW | ARC_ALLOW) & RCVD_IN_DNSWL_MED',
    description: 'Sufficiently DKIM/ARC signed and received from IP with medium trust at DNSWL',
    score: -0.5,
    policy: 'leave',
  },
  RCVD_DKIM_ARC_DNSWL_HI: {
    expression: '(R_DKIM_ALLOW | ARC_ALLOW) & RCVD_IN_DNSWL_HI',
    description: 'Sufficiently DKIM/ARC signed and received from IP with high trust at DNSWL',
    score: -1.0,
    policy: 'leave',
  },
  HAS_ANON_DOMAIN: {
    // Rspamd also reads HAS_GUC_PROXY_URI and HAS_ONION_URI, which no mailsift rule inserts.
    expression: 'URIBL_RED | DBL_ABUSE_REDIR',
    description: 'Contains one or more domains trying to disguise owner/destination',
    score: 0.1,
    policy: 'leave',
  },
  BAD_REP_POLICIES: {
    expression: '(~g-:policies) & (-g+:fuzzy | -g+:statistics | -g+:surbl | -g+:rbl)',
    description: 'Contains valid policies but are also marked by fuzzy/bayes/surbl/rbl',
    score: 0.1,
  },
  VIOLATED_DIRECT_SPF: {
    expression: '(R_SPF_FAIL | R_SPF_SOFTFAIL) & (RCVD_COUNT_ZERO | RCVD_NO_TLS_LAST)',
    description: 'Has no Received (or no trusted received relays) and SPF policy fails or soft fails',
    score: 3.5,
    policy: 'leave',
  },
  IP_SCORE_FREEMAIL: { expression: 'FREEMAIL_FROM & SENDER_REP_SPAM', description: 'Negate IP_SCORE when message comes from FreeMail', score: 0.0, policy: 'remove_weight' },
  BROKEN_HEADERS_MAILLIST: { expression: 'BROKEN_HEADERS & -MAILLIST', description: 'Negate BROKEN_HEADERS when message comes via some mailing list', score: 0.0, policy: 'remove_weight' },
  LEAKED_PASSWORD_SCAM: {
    // Rspamd reads BITCOIN_ADDR alone; the same demands now name Ethereum wallets too.
    expression: '(BITCOIN_ADDR | ETHEREUM_ADDR) & (LEAKED_PASSWORD_SCAM_RE | R_MIXED_CHARSET | R_EMPTY_IMAGE)',
    description: 'Contains BTC wallet address and scam patterns',
    score: 7.0,
    policy: 'leave',
    group: 'scams',
  },
  AUTOGEN_PHP_SPAMMY: {
    expression: '(HAS_X_POS | HAS_PHPMAILER_SIG | HAS_X_PHP_SCRIPT) & (SUBJECT_ENDS_QUESTION | SUBJECT_ENDS_EXCLAIM | MANY_INVISIBLE_PARTS)',
    description: 'Message was generated by PHP script and contains some spam indicators',
    score: 1.0,
    policy: 'leave',
  },
  FREEMAIL_AFF: {
    expression: '(FREEMAIL_FROM | FREEMAIL_ENVFROM | FREEMAIL_REPLYTO) & R_UNDISC_RCPT & (INTRODUCTION | FROM_NAME_HAS_TITLE | FREEMAIL_REPLYTO_NEQ_FROM_DOM)',
    description: "Message exhibits strong characteristics of advance fee fraud (AFF a/k/a '419' spam) involving freemail addresses",
    score: 4.0,
    policy: 'leave',
  },
  // Phishing links or feed hits (phishing module: PHISHING, PHISHED_OPENPHISH, PHISHED_PHISHTANK;
  // rbl: DBL_PHISH) together with other signs. HACKED_WP_PHISHING has no score in
  // composites.conf: its weight and group come from scores.d/phishing_group.conf.
  HACKED_WP_PHISHING: {
    expression: '(HAS_X_POS | HAS_PHPMAILER_SIG) & HAS_WP_URI & (PHISHING | DBL_PHISH | PHISHED_OPENPHISH | PHISHED_PHISHTANK)',
    description: 'Phish message sent by hacked Wordpress instance',
    score: 4.5,
    policy: 'leave',
    group: 'phishing',
  },
  PHISH_EMOTION: {
    expression: '(PHISHING | DBL_PHISH | PHISHED_OPENPHISH | PHISHED_PHISHTANK) & (SUBJECT_ENDS_QUESTION | SUBJECT_ENDS_EXCLAIM)',
    description: 'Phish message with subject trying to address users emotion',
    score: 1.0,
    policy: 'leave',
  },
};
