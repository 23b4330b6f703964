import { defineModule } from '../../plugin-api/index.js';
import { MaillistConfig } from './config.js';
import { MAILLIST_SYMBOLS } from './symbols.js';
import { checkMaillist } from './check.js';

/** Mail that a mailing-list manager delivered (Rspamd's maillist plugin); composites read MAILLIST. */
export const maillistModule = defineModule<MaillistConfig>({
  name: 'maillist',
  config: MaillistConfig,
  symbols: MAILLIST_SYMBOLS,
  setup(ctx) {
    ctx.symbol({ name: 'MAILLIST', stage: 'filters', inserts: ['MAILLIST'], check: checkMaillist });
  },
});
