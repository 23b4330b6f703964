import { defineModule } from '../../plugin-api/index.js';
import { ReceivedConfig } from './config.js';
import { RECEIVED_SYMBOLS } from './symbols.js';
import { checkCount, checkHeloUser, checkPreviouslyDelivered, checkTls, makeOnceReceivedCheck } from './check.js';

/** One PTR lookup. */
const ONCE_RECEIVED_TIMEOUT_S = 5;

const prefixed = (prefix: string): string[] => Object.keys(RECEIVED_SYMBOLS).filter((s) => s.startsWith(prefix));

/** Received-chain checks; no DNS: the RCVD_IN_* lists belong to the rbl module. */
export const receivedModule = defineModule<ReceivedConfig>({
  name: 'received',
  config: ReceivedConfig,
  symbols: RECEIVED_SYMBOLS,
  setup(ctx) {
    ctx.symbol({ name: 'CHECK_RECEIVED', stage: 'filters', inserts: prefixed('RCVD_COUNT_'), check: checkCount });
    ctx.symbol({
      name: 'CHECK_RCVD',
      stage: 'filters',
      inserts: ['RCVD_TLS_ALL', 'RCVD_TLS_LAST', 'RCVD_NO_TLS_LAST', 'RCVD_VIA_SMTP_AUTH'],
      check: checkTls,
    });
    ctx.symbol({ name: 'RCVD_HELO_USER', stage: 'filters', inserts: ['RCVD_HELO_USER'], check: checkHeloUser });
    ctx.symbol({
      name: 'ONCE_RECEIVED_CHECK',
      stage: 'filters',
      // Asks for the client's PTR when the MTA passed no name (forced: not counted against the cap).
      flags: ['coro'],
      timeout: ONCE_RECEIVED_TIMEOUT_S,
      inserts: ['ONCE_RECEIVED', 'ONCE_RECEIVED_STRICT', 'DIRECT_TO_MX', 'RDNS_NONE', 'RDNS_DNSFAIL'],
      check: makeOnceReceivedCheck(ctx.config),
    });
    ctx.symbol({
      name: 'PREVIOUSLY_DELIVERED',
      stage: 'filters',
      inserts: ['PREVIOUSLY_DELIVERED'],
      check: checkPreviouslyDelivered,
    });
  },
});
