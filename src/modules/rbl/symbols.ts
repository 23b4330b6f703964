import type { SymbolDef } from '../../plugin-api/index.js';

// Scores of Rspamd 3.4 (scores.d/rbl_group.conf and surbl_group.conf). IP lists are group
// `rbl`, URL/e-mail lists group `surbl` (capped at 12.5 in conf/groups.yaml). Symbols of
// lists a user adds score 0 until given a score in config.

const ip = (score: number, description: string): SymbolDef => ({ score, group: 'rbl', description });
const url = (score: number, description: string): SymbolDef => ({ score, group: 'surbl', description });
const BLOCKED_PUB = 'You are querying Spamhaus from an open resolver, please see https://www.spamhaus.org/returnc/pub/';
const BLOCKED_VOL = 'You are exceeding the query limit, please see https://www.spamhaus.org/returnc/vol/';
const DWL = 'Message has a valid dkim signature originated from domain listed at https://www.dnswl.org';

export const RBL_SYMBOLS: Record<string, SymbolDef> = {
  DNSWL_BLOCKED: ip(0, 'Resolver blocked due to excessive queries'),
  RCVD_IN_DNSWL: ip(0, 'Unrecognised result from https://www.dnswl.org'),
  RCVD_IN_DNSWL_NONE: ip(0, 'Sender listed at https://www.dnswl.org, no trust'),
  RCVD_IN_DNSWL_LOW: ip(-0.1, 'Sender listed at https://www.dnswl.org, low trust'),
  RCVD_IN_DNSWL_MED: ip(-0.2, 'Sender listed at https://www.dnswl.org, medium trust'),
  RCVD_IN_DNSWL_HI: ip(-0.5, 'Sender listed at https://www.dnswl.org, high trust'),
  DWL_DNSWL_BLOCKED: ip(0, 'Resolver blocked due to excessive queries (dwl)'),
  DWL_DNSWL: ip(0, 'Unrecognised result from https://www.dnswl.org (dwl)'),
  DWL_DNSWL_NONE: ip(0, `${DWL}, no trust`),
  DWL_DNSWL_LOW: ip(-1, `${DWL}, low trust`),
  DWL_DNSWL_MED: ip(-2, `${DWL}, medium trust`),
  DWL_DNSWL_HI: ip(-3.5, `${DWL}, high trust`),
  RBL_SPAMHAUS: ip(0, 'Unrecognised result from Spamhaus ZEN'),
  RBL_SPAMHAUS_SBL: ip(4, 'From address is listed in ZEN SBL'),
  RBL_SPAMHAUS_CSS: ip(2, 'From address is listed in ZEN CSS'),
  RBL_SPAMHAUS_XBL: ip(4, 'From address is listed in ZEN XBL'),
  RBL_SPAMHAUS_PBL: ip(2, 'From address is listed in ZEN PBL (ISP list)'),
  RBL_SPAMHAUS_DROP: ip(7, 'From address is listed in ZEN DROP BL'),
  RBL_SPAMHAUS_BLOCKED_OPENRESOLVER: ip(0, BLOCKED_PUB),
  RBL_SPAMHAUS_BLOCKED: ip(0, BLOCKED_VOL),
  RECEIVED_SPAMHAUS: ip(0, 'Unrecognised result from Spamhaus ZEN (received)'),
  RECEIVED_SPAMHAUS_SBL: ip(3, 'Received address is listed in ZEN SBL'),
  RECEIVED_SPAMHAUS_CSS: ip(1, 'Received address is listed in ZEN CSS'),
  RECEIVED_SPAMHAUS_XBL: ip(3, 'Received address is listed in ZEN XBL'),
  RECEIVED_SPAMHAUS_PBL: ip(0, 'Received address is listed in ZEN PBL (ISP list)'),
  RECEIVED_SPAMHAUS_DROP: ip(6, 'Received address is listed in ZEN DROP BL'),
  RECEIVED_SPAMHAUS_BLOCKED_OPENRESOLVER: ip(0, BLOCKED_PUB),
  RECEIVED_SPAMHAUS_BLOCKED: ip(0, BLOCKED_VOL),
  RBL_SENDERSCORE: ip(2, 'From address is listed in senderscore.com BL'),
  MAILSPIKE: ip(0, 'Unrecognised result from Mailspike'),
  RWL_MAILSPIKE_NEUTRAL: ip(0, 'Neutral result from Mailspike'),
  RBL_MAILSPIKE_WORST: ip(2, 'From address is listed in RBL - worst possible reputation'),
  RBL_MAILSPIKE_VERYBAD: ip(1.5, 'From address is listed in RBL - very bad reputation'),
  RBL_MAILSPIKE_BAD: ip(1, 'From address is listed in RBL - bad reputation'),
  RWL_MAILSPIKE_POSSIBLE: ip(0, 'From address is listed in RWL - possibly legit'),
  RWL_MAILSPIKE_GOOD: ip(-0.1, 'From address is listed in RWL - good reputation'),
  RWL_MAILSPIKE_VERYGOOD: ip(-0.2, 'From address is listed in RWL - very good reputation'),
  RWL_MAILSPIKE_EXCELLENT: ip(-0.4, 'From address is listed in RWL - excellent reputation'),
  RBL_SEM: ip(1, 'From address is listed in Spameatingmonkey RBL'),
  RBL_SEM_IPV6: ip(1, 'From address is listed in Spameatingmonkey RBL (IPv6)'),
  RBL_VIRUSFREE_UNKNOWN: ip(0, 'Unrecognised result from virusfree.cz'),
  RBL_VIRUSFREE_BOTNET: ip(2, 'From address is listed in virusfree.cz BL'),
  RBL_NIXSPAM: ip(4, 'From address is listed in NiX Spam (http://www.dnsbl.manitu.net/)'),
  RBL_BLOCKLISTDE: ip(4, 'From address is listed in Blocklist (https://www.blocklist.de/)'),
  RECEIVED_BLOCKLISTDE: ip(3, 'Received address is listed in Blocklist (https://www.blocklist.de/)'),

  SURBL_MULTI: url(0, 'SURBL: unrecognised result'),
  SURBL_BLOCKED: url(0, 'SURBL: blocked by policy/overusage'),
  PH_SURBL_MULTI: url(5.5, 'SURBL: Phishing sites'),
  MW_SURBL_MULTI: url(5.5, 'SURBL: Malware sites'),
  ABUSE_SURBL: url(5.5, 'SURBL: ABUSE'),
  CRACKED_SURBL: url(4, 'SURBL: cracked site'),
  RSPAMD_URIBL: url(4.5, 'Rspamd uribl, bl.rspamd.com'),
  RSPAMD_EMAILBL: url(2.5, 'Rspamd emailbl, bl.rspamd.com'),
  MSBL_EBL: url(7.5, 'MSBL emailbl'),
  MSBL_EBL_GREY: url(0.5, 'MSBL emailbl grey list'),
  SEM_URIBL_UNKNOWN: url(0, 'Spameatingmonkey uribl: unknown result'),
  SEM_URIBL: url(3.5, 'Spameatingmonkey uribl'),
  SEM_URIBL_FRESH15_UNKNOWN: url(0, 'Spameatingmonkey Fresh15 uribl: unknown result'),
  SEM_URIBL_FRESH15: url(3, 'Spameatingmonkey uribl. Domains registered in the last 15 days'),
  DBL: url(0, 'DBL unknown result'),
  DBL_SPAM: url(6.5, 'DBL uribl spam'),
  DBL_PHISH: url(6.5, 'DBL uribl phishing'),
  DBL_MALWARE: url(6.5, 'DBL uribl malware'),
  DBL_BOTNET: url(5.5, 'DBL uribl botnet C&C domain'),
  DBL_ABUSE: url(6.5, 'DBL uribl abused legit spam'),
  DBL_ABUSE_REDIR: url(1.5, 'DBL uribl abused spammed redirector domain'),
  DBL_ABUSE_PHISH: url(7.5, 'DBL uribl abused legit phish'),
  DBL_ABUSE_MALWARE: url(7.5, 'DBL uribl abused legit malware'),
  DBL_ABUSE_BOTNET: url(5.5, 'DBL uribl abused legit botnet C&C'),
  DBL_PROHIBIT: url(0, 'DBL uribl IP queries prohibited!'),
  DBL_BLOCKED_OPENRESOLVER: url(0, BLOCKED_PUB),
  DBL_BLOCKED: url(0, BLOCKED_VOL),
  URIBL_MULTI: url(0, 'uribl.com: unrecognised result'),
  URIBL_BLOCKED: url(0, 'uribl.com: query refused'),
  URIBL_BLACK: url(7.5, 'uribl.com black url'),
  URIBL_RED: url(3.5, 'uribl.com red url'),
  URIBL_GREY: url(1.5, 'uribl.com grey url'),
  SPAMHAUS_ZEN_URIBL: url(0, 'Spamhaus ZEN URIBL: Filtered result'),
  URIBL_SBL: url(6.5, 'A domain in the message body resolves to an IP listed in Spamhaus SBL'),
  URIBL_SBL_CSS: url(6.5, 'A domain in the message body resolves to an IP listed in Spamhaus SBL CSS'),
  URIBL_XBL: url(1.5, 'A domain in the message body resolves to an IP listed in Spamhaus XBL'),
  URIBL_PBL: url(0.01, 'A domain in the message body resolves to an IP listed in Spamhaus PBL'),
  URIBL_DROP: url(5, 'A domain in the message body resolves to an IP listed in Spamhaus DROP'),
};

/** A list's `<symbol>_FAIL`: its lookup failed (time-out, server failure), as Rspamd; never scores. */
export function failSymbolDef(symbol: string): SymbolDef {
  return { score: 0, group: RBL_SYMBOLS[symbol]?.group ?? 'rbl', description: `${symbol}: DNS lookup failed` };
}
