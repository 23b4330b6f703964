import { defineModule } from '../../plugin-api/index.js';
import { UrlChecksConfig } from './config.js';
import { URL_CHECKS_SYMBOLS } from './symbols.js';
import { checkIpfs, checkOmograph, checkSuspiciousUrl, checkUriCountOdd, checkUrlInSubject } from './check.js';

/** Rspamd's URL rules that need no network: homograph hosts, IPFS gateways, obscured hosts, links in the Subject, odd link counts. */
export const urlChecksModule = defineModule<UrlChecksConfig>({
  name: 'url_checks',
  config: UrlChecksConfig,
  symbols: URL_CHECKS_SYMBOLS,
  setup(ctx) {
    // After phishing, which marks the links whose text shows another site.
    if (ctx.config.omograph) {
      ctx.symbol({ name: 'OMOGRAPH_URL', stage: 'filters', deps: [{ name: 'PHISHING_CHECK', weak: true }], inserts: ['OMOGRAPH_URL'], check: checkOmograph });
    }
    if (ctx.config.ipfs) ctx.symbol({ name: 'HAS_IPFS_GATEWAY_URL', stage: 'filters', inserts: ['HAS_IPFS_GATEWAY_URL'], check: checkIpfs });
    if (ctx.config.suspicious) {
      ctx.symbol({ name: 'R_SUSPICIOUS_URL', stage: 'filters', inserts: ['R_SUSPICIOUS_URL', 'ZERO_WIDTH_SPACE_URL'], check: checkSuspiciousUrl });
    }
    ctx.symbol({ name: 'URL_IN_SUBJECT', stage: 'filters', inserts: ['URL_IN_SUBJECT'], check: checkUrlInSubject });
    ctx.symbol({ name: 'URI_COUNT_ODD', stage: 'filters', inserts: ['URI_COUNT_ODD'], check: checkUriCountOdd });
  },
});
