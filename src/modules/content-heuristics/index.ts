import { defineModule } from '../../plugin-api/index.js';
import type { Task } from '../../plugin-api/index.js';
import { ContentHeuristicsConfig } from './config.js';
import { CONTENT_SYMBOLS } from './symbols.js';
import {
  checkBodyText,
  checkPaddedSubject,
  checkRatwareMsgid,
  checkReceivedHelo,
  checkHtmlOnlyNoMua,
  checkPriorityNoMua,
  checkDateNoZone,
  checkHtmlFragment,
  checkSubject,
  makeDateAfterReceived,
  makeReplytoFreemail,
} from './check.js';

/** Signs of bulk unsolicited mail in headers and text that Rspamd's rule set does not cover. */
export const contentHeuristicsModule = defineModule<ContentHeuristicsConfig>({
  name: 'content_heuristics',
  config: ContentHeuristicsConfig,
  symbols: CONTENT_SYMBOLS,
  setup(ctx) {
    const rules: Array<[string, string[], (task: Task) => void]> = [
      ['SUBJ_PADDED_TAG', ['SUBJ_PADDED_TAG'], checkPaddedSubject],
      ['MSGID_RATWARE_ZERO', ['MSGID_RATWARE_ZERO'], checkRatwareMsgid],
      ['DATE_AFTER_RECEIVED', ['DATE_AFTER_RECEIVED'], makeDateAfterReceived(ctx.config)],
      ['REPLYTO_AT_FREEMAIL', ['REPLYTO_AT_FREEMAIL'], makeReplytoFreemail(ctx.config)],
      ['CONTENT_BODY_TEXT', ['BODY_CONSENT_CLAIM', 'BODY_OPT_OUT', 'BODY_TOLL_FREE', 'BODY_REMOVE_LIST', 'BODY_SPAM_DISCLAIMER', 'BODY_EARN_DOLLARS', 'BODY_ADDRESS_SOURCE', 'BODY_GENERIC_SALUTATION', 'BODY_SALES_PITCH', 'BODY_ADVANCE_FEE', 'BODY_STOCK_TOUT', 'BODY_EXCLAIM', 'BODY_SHOUTING'], checkBodyText],
      ['CONTENT_SUBJECT', ['SUBJ_MONEY', 'SUBJ_ADV_LABEL'], checkSubject],
      ['HTML_ONLY_NO_MUA', ['HTML_ONLY_NO_MUA'], checkHtmlOnlyNoMua],
      ['XPRIO_NO_MUA', ['XPRIO_NO_MUA'], checkPriorityNoMua],
      ['DATE_NO_TZ', ['DATE_NO_TZ'], checkDateNoZone],
      ['HTML_NO_ROOT', ['HTML_NO_ROOT'], checkHtmlFragment],
      ['RCVD_HELO_BARE', ['RCVD_HELO_BARE'], checkReceivedHelo],
    ];
    for (const [name, inserts, check] of rules) {
      ctx.symbol({ name, stage: 'filters', inserts, check: (task) => { if (!task.meta.raw) check(task); } });
    }
  },
});
