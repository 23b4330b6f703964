import type { SymbolDef } from '../../plugin-api/index.js';

const G = 'content';

/**
 * mailsift's own content heuristics (Rspamd has no equivalent). Scores follow the hit rates
 * measured on the development split of the accuracy corpus (see conf/groups.yaml, group content).
 */
export const CONTENT_SYMBOLS: Record<string, SymbolDef> = {
  SUBJ_PADDED_TAG: { score: 3.0, group: G, description: 'Subject padded with a run of blanks before a trailing tag (hash buster)' },
  MSGID_RATWARE_ZERO: { score: 3.0, group: G, description: 'Message-ID made of zero-padded hex fields joined by $ (bulk mailer signature)' },
  DATE_AFTER_RECEIVED: { score: 2.0, group: G, description: 'Date header is hours later than the newest Received timestamp' },
  REPLYTO_AT_FREEMAIL: { score: 1.5, group: G, description: 'Explicit Reply-To names a free-mail mailbox' },
  BODY_CONSENT_CLAIM: { score: 2.0, group: G, description: 'Text claims the recipient asked for or agreed to this mail' },
  BODY_OPT_OUT: { score: 0.75, group: G, description: 'Text talks about opting in or out of a mailing' },
  BODY_TOLL_FREE: { score: 1.5, group: G, description: 'Text gives a North American toll-free phone number' },
  BODY_SALES_PITCH: { score: 1.0, group: G, description: 'Text uses many stock sales and money phrases' },
  BODY_ADVANCE_FEE: { score: 3.0, group: G, description: 'Text combines several themes of advance-fee fraud' },
  BODY_SHOUTING: { score: 0.75, group: G, description: 'Most letters of a long text are capitals' },
  SUBJ_MONEY: { score: 1.0, group: G, description: 'Subject names a dollar amount' },
  SUBJ_ADV_LABEL: { score: 2.0, group: G, description: 'Subject carries a legal advertising label (ADV:, 未承諾広告, (광고))' },
  BODY_REMOVE_LIST: { score: 0.75, group: G, description: 'Text explains how to be removed from a mailing list' },
  BODY_SPAM_DISCLAIMER: { score: 2.0, group: G, description: 'Text claims not to be spam or cites a bulk-mail bill' },
  BODY_EARN_DOLLARS: { score: 1.0, group: G, description: 'Text promises earnings in dollars' },
  BODY_ADDRESS_SOURCE: { score: 2.0, group: G, description: 'Text says where the sender found the recipient\'s address' },
  BODY_GENERIC_SALUTATION: { score: 1.0, group: G, description: 'Text greets a reader whose name the sender does not know (Dear Sir or Madam, Dear Friend)' },
  XPRIO_NO_MUA: { score: 1.0, group: G, description: 'X-Priority header but no mail client named' },
  BODY_STOCK_TOUT: { score: 2.0, group: G, description: 'Text combines several themes of stock touting' },
  BODY_EXCLAIM: { score: 0.75, group: G, description: 'Text has a run of three or more exclamation marks' },
  DATE_NO_TZ: { score: 2.0, group: G, description: 'Date header has no time zone' },
  HTML_NO_ROOT: { score: 1.0, group: G, description: 'HTML part is a fragment without an <html> element' },
  HTML_ONLY_NO_MUA: { score: 1.0, group: G, description: 'HTML-only message that names no mail client' },
  RCVD_HELO_BARE: { score: 1.5, group: G, description: 'First external relay greeted with an IP literal or a single-label name' },
};
