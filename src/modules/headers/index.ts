import { defineModule } from '../../plugin-api/index.js';
import type { SymbolRegistration, Task } from '../../plugin-api/index.js';
import { HeadersConfig } from './config.js';
import { HEADERS_SYMBOLS } from './symbols.js';
import {
  checkFrom,
  checkFrom8bit,
  checkMissingFrom,
  checkMultipleFrom,
  checkNoSpaceInFrom,
  checkFreemailReplyToNeqFrom,
  checkReplyTo,
  checkSpamFlag,
  checkTagged,
} from './check-from.js';
import { checkMissingTo, checkRcpt8bit, checkToCc } from './check-rcpt.js';
import {
  checkDisplayName,
  checkForgedMdn,
  checkHeaderCase,
  checkReadConfirm,
  checkSpoofReplyTo,
  checkUndisclosed,
} from './check-spoof.js';
import { checkMid, checkMissingMid, makeDateCheck } from './check-date-mid.js';
import { checkForged } from './check-forged.js';
import { checkEnvfromPrvs, checkEnvfromVerp } from './check-envfrom.js';
import { checkForwarded, checkFwdGoogle, checkFwdMailru, checkFwdSrs, checkFwdYandex } from './check-forwarding.js';
import {
  checkBadCte,
  checkBrokenHeaders,
  checkListUnsub,
  checkMimeVersion,
  checkMissingCharset,
  checkSubject,
  checkUniqueHeaders,
  checkXPriority,
} from './check-misc.js';

const prefixed = (prefix: string): string[] => Object.keys(HEADERS_SYMBOLS).filter((s) => s.startsWith(prefix));

/**
 * Rules Rspamd marks `mime`/`mime_only`: they judge a parsed header block, so they do not run for
 * raw (`Raw: yes`) input, where everything is body (Rspamd 3.4 skips them there too).
 */
const MIME_ONLY = new Set([
  'MISSING_TO',
  'DATE_CB',
  'MISSING_MID',
  'CHECK_MID',
  'R_BAD_CTE_7BIT',
  'R_MISSING_CHARSET',
  'CHECK_SUBJECT',
  'R_NO_SPACE_IN_FROM',
  'R_UNDISC_RCPT',
  'FROM_DISPLAY_CALLBACK',
  'SPOOF_REPLYTO',
  'ENVFROM_PRVS',
  'ENVFROM_VERP',
]);

/** Rules that read the client's host name: after once_received, which may have resolved it. */
const READS_CLIENT_NAME = new Set(['FWD_YANDEX', 'FWD_MAILRU']);

const mimeOnly = (check: (task: Task) => void) => (task: Task): void => {
  if (!task.meta.raw) check(task);
};

/** Header sanity checks: one callback per Rspamd rule, each owning its result symbols. */
export const headersModule = defineModule<HeadersConfig>({
  name: 'headers',
  config: HeadersConfig,
  symbols: HEADERS_SYMBOLS,
  setup(ctx) {
    const rules: Array<[string, string[], (task: Task) => void]> = [
      ['MISSING_FROM', ['MISSING_FROM'], checkMissingFrom],
      ['MULTIPLE_FROM', ['MULTIPLE_FROM'], checkMultipleFrom],
      ['INVALID_FROM_8BIT', ['INVALID_FROM_8BIT'], checkFrom8bit],
      ['R_NO_SPACE_IN_FROM', ['R_NO_SPACE_IN_FROM'], checkNoSpaceInFrom],
      [
        'CHECK_FROM',
        [
          'ENVFROM_INVALID',
          'FROM_INVALID',
          'FROM_NO_DN',
          'FROM_DN_EQ_ADDR',
          'FROM_HAS_DN',
          'FROM_NAME_EXCESS_SPACE',
          'FROM_NAME_HAS_TITLE',
          'FROM_EQ_ENVFROM',
          'FROM_NEQ_ENVFROM',
          'TO_EQ_FROM',
          'TO_DOM_EQ_FROM_DOM',
        ],
        checkFrom,
      ],
      ['MISSING_TO', ['MISSING_TO'], checkMissingTo],
      ['CHECK_TO_CC', [...prefixed('RCPT_COUNT_'), ...prefixed('TO_DN_'), ...prefixed('TO_MATCH_ENVRCPT_')], checkToCc],
      ['INVALID_RCPT_8BIT', ['INVALID_RCPT_8BIT'], checkRcpt8bit],
      ['DATE_CB', ['MISSING_DATE', 'INVALID_DATE', 'DATE_IN_FUTURE', 'DATE_IN_PAST'], makeDateCheck(ctx.config)],
      ['MISSING_MID', ['MISSING_MID'], checkMissingMid],
      ['CHECK_MID', prefixed('MID_'), checkMid],
      ['MULTIPLE_UNIQUE_HEADERS', ['MULTIPLE_UNIQUE_HEADERS'], checkUniqueHeaders],
      ['BROKEN_HEADERS', ['BROKEN_HEADERS'], checkBrokenHeaders],
      ['CHECK_MIME_VERSION', ['MISSING_MIME_VERSION'], checkMimeVersion],
      ['R_BAD_CTE_7BIT', ['R_BAD_CTE_7BIT'], checkBadCte],
      ['R_MISSING_CHARSET', ['R_MISSING_CHARSET'], checkMissingCharset],
      ['CHECK_SUBJECT', ['MISSING_SUBJECT', 'EMPTY_SUBJECT', 'SUBJ_ALL_CAPS', 'LONG_SUBJ', 'FAKE_REPLY'], checkSubject],
      ['HAS_LIST_UNSUB', ['HAS_LIST_UNSUB'], checkListUnsub],
      ['HAS_X_PRIO', prefixed('HAS_X_PRIO_'), checkXPriority],
      ['SPAM_FLAG', ['SPAM_FLAG'], checkSpamFlag],
      ['FROM_DISPLAY_CALLBACK', ['FROM_NEQ_DISPLAY_NAME', 'SPOOF_DISPLAY_NAME'], checkDisplayName],
      ['SPOOF_REPLYTO', ['SPOOF_REPLYTO'], checkSpoofReplyTo],
      ['HEADER_RCONFIRM_MISMATCH', ['HEADER_RCONFIRM_MISMATCH'], checkReadConfirm],
      ['HEADER_FORGED_MDN', ['HEADER_FORGED_MDN'], checkForgedMdn],
      ['R_UNDISC_RCPT', ['R_UNDISC_RCPT'], checkUndisclosed],
      ['HEADER_CASE', ['MV_CASE', 'XM_CASE'], checkHeaderCase],
      // Rspamd's forged_recipients callback and rules/forwarding.lua: need the MTA's envelope.
      ['FORGED_CALLBACK', ['FORGED_RECIPIENTS', 'FORGED_SENDER'], checkForged],
      ['FWD_GOOGLE', ['FWD_GOOGLE'], checkFwdGoogle],
      ['FWD_YANDEX', ['FWD_YANDEX'], checkFwdYandex],
      ['FWD_MAILRU', ['FWD_MAILRU'], checkFwdMailru],
      ['FWD_SRS', ['FWD_SRS'], checkFwdSrs],
      ['FORWARDED', ['FORWARDED'], checkForwarded],
      // rules/misc.lua: tagged return paths, read by the FORGED_SENDER_VERP_SRS composite.
      ['ENVFROM_PRVS', ['ENVFROM_PRVS'], checkEnvfromPrvs],
      ['ENVFROM_VERP', ['ENVFROM_VERP'], checkEnvfromVerp],
    ];
    for (const [name, inserts, check] of rules) {
      const reg: SymbolRegistration = { name, stage: 'filters', inserts, check: MIME_ONLY.has(name) ? mimeOnly(check) : check };
      if (READS_CLIENT_NAME.has(name)) reg.deps = [{ name: 'ONCE_RECEIVED_CHECK', weak: true }];
      ctx.symbol(reg);
    }
    // A prefilter in Rspamd (it rewrites the addresses there before any rule reads them).
    ctx.symbol({ name: 'EMAIL_PLUS_ALIASES', stage: 'prefilters', inserts: ['TAGGED_FROM', 'TAGGED_RCPT'], check: checkTagged });
    // CHECK_REPLYTO reads FROM_NAME_HAS_TITLE, so it runs after CHECK_FROM (weak: ordering only).
    ctx.symbol({
      name: 'CHECK_REPLYTO',
      stage: 'filters',
      deps: [{ name: 'CHECK_FROM', weak: true }],
      inserts: [...prefixed('REPLYTO_'), 'HAS_REPLYTO'],
      check: checkReplyTo,
    });
    // Reads the options (the matched domains) of the shipped multimap rules; weak: with multimap
    // off or those rules removed it simply never fires.
    ctx.symbol({
      name: 'FREEMAIL_REPLYTO_NEQ_FROM_DOM',
      stage: 'filters',
      deps: [{ name: 'FREEMAIL_REPLYTO', weak: true }, { name: 'FREEMAIL_FROM', weak: true }],
      inserts: ['FREEMAIL_REPLYTO_NEQ_FROM_DOM'],
      check: checkFreemailReplyToNeqFrom,
    });
  },
});
