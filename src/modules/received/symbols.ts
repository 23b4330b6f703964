// Every symbol the received module can insert, with Rspamd 3.4's score, group and description
// (rules/headers_checks.lua, rules/misc.lua, plugins/once_received.lua,
// conf/scores.d/headers_group.conf).
import type { SymbolDef } from '../../plugin-api/index.js';

const h = (score: number, description: string): SymbolDef => ({ score, group: 'headers', description });

export const RECEIVED_SYMBOLS: Record<string, SymbolDef> = {
  RCVD_COUNT_ZERO: h(0.0, 'Message has no Received headers'),
  RCVD_COUNT_ONE: h(0.0, 'Message has one Received header'),
  RCVD_COUNT_TWO: h(0.0, 'Message has two Received headers'),
  RCVD_COUNT_THREE: h(0.0, 'Message has 3-5 Received headers'),
  RCVD_COUNT_FIVE: h(0.0, 'Message has 5-7 Received headers'),
  RCVD_COUNT_SEVEN: h(0.0, 'Message has 7-11 Received headers'),
  RCVD_COUNT_TWELVE: h(0.0, 'Message has 12 or more Received headers'),
  RCVD_TLS_ALL: h(0.0, 'All hops used encrypted transports'),
  RCVD_TLS_LAST: h(0.0, 'Last hop used encrypted transports'),
  RCVD_NO_TLS_LAST: h(0.1, 'Last hop did not use encrypted transports'),
  RCVD_VIA_SMTP_AUTH: h(0.0, 'Authenticated hand-off was seen in Received headers'),
  RCVD_HELO_USER: h(3.0, 'HELO User spam pattern'),
  ONCE_RECEIVED: h(0.1, 'One received header in a message'),
  ONCE_RECEIVED_STRICT: h(4.0, "One received header with 'bad' patterns inside"),
  DIRECT_TO_MX: h(0.0, 'Message has been directly delivered from MUA to local MX'),
  RDNS_NONE: h(1.0, "Cannot resolve reverse DNS for sender's IP"),
  RDNS_DNSFAIL: h(0.0, 'PTR verification DNS error'),
  PREVIOUSLY_DELIVERED: h(0.0, 'Message either to a list or was forwarded'),
};
