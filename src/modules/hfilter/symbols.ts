import type { SymbolDef } from '../../plugin-api/index.js';

const G = 'hfilter';

/** Rspamd 3.4 conf/scores.d/hfilter_group.conf: scores and descriptions as `/symbols` lists them. */
export const HFILTER_SYMBOLS: Record<string, SymbolDef> = {
  HFILTER_HELO_BAREIP: { score: 3.0, group: G, description: 'Helo host is bare ip' },
  HFILTER_HELO_BADIP: { score: 4.5, group: G, description: 'Helo host is very bad ip' },
  HFILTER_HELO_1: { score: 0.5, group: G, description: 'Helo host checks (very low)' },
  HFILTER_HELO_2: { score: 1.0, group: G, description: 'Helo host checks (low)' },
  HFILTER_HELO_3: { score: 2.0, group: G, description: 'Helo host checks (medium)' },
  HFILTER_HELO_4: { score: 2.5, group: G, description: 'Helo host checks (hard)' },
  HFILTER_HELO_5: { score: 3.0, group: G, description: 'Helo host checks (very hard)' },
  HFILTER_HELO_NOT_FQDN: { score: 2.0, group: G, description: 'Helo not FQDN' },
  HFILTER_HELO_NORES_A_OR_MX: { score: 0.3, group: G, description: 'Helo no resolve to A or MX' },
  HFILTER_HELO_NORESOLVE_MX: { score: 0.2, group: G, description: 'MX found in Helo and no resolve' },
  HFILTER_HELO_IP_A: { score: 1.0, group: G, description: 'Helo A IP != hostname IP' },
  HFILTER_HOSTNAME_1: { score: 0.5, group: G, description: 'Hostname checks (very low)' },
  HFILTER_HOSTNAME_2: { score: 1.0, group: G, description: 'Hostname checks (low)' },
  HFILTER_HOSTNAME_3: { score: 2.0, group: G, description: 'Hostname checks (medium)' },
  HFILTER_HOSTNAME_4: { score: 2.5, group: G, description: 'Hostname checks (hard)' },
  HFILTER_HOSTNAME_5: { score: 3.0, group: G, description: 'Hostname checks (very hard)' },
  HFILTER_HOSTNAME_UNKNOWN: { score: 2.5, group: G, description: 'Unknown client hostname (PTR or FCrDNS verification failed)' },
  HFILTER_FROMHOST_NOT_FQDN: { score: 3.0, group: G, description: 'FROM host not FQDN' },
  HFILTER_FROMHOST_NORES_A_OR_MX: { score: 1.5, group: G, description: 'FROM host no resolve to A or MX' },
  HFILTER_FROMHOST_NORESOLVE_MX: { score: 0.5, group: G, description: 'MX found in FROM host and no resolve' },
  HFILTER_FROM_BOUNCE: { score: 0.0, group: G, description: 'Bounce message' },
  HFILTER_RCPT_BOUNCEMOREONE: { score: 1.5, group: G, description: 'Message from bounce and over 1 recipient' },
  HFILTER_MID_NOT_FQDN: { score: 0.5, group: G, description: 'Message-id host not FQDN' },
  HFILTER_MID_NORES_A_OR_MX: { score: 0.5, group: G, description: 'Message-id host no resolve to A or MX' },
  HFILTER_MID_NORESOLVE_MX: { score: 0.5, group: G, description: 'MX found in Message-id host and no resolve' },
  HFILTER_URL_ONLY: { score: 2.2, group: G, description: 'URL only in body' },
  HFILTER_URL_ONELINE: { score: 2.5, group: G, description: 'One line URL and text in body' },
};
