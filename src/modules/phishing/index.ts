import { defineModule } from '../../plugin-api/index.js';
import type { Task } from '../../plugin-api/index.js';
import { PhishingConfig } from './config.js';
import { PHISHING_SYMBOLS } from './symbols.js';
import { makePhishingCheck } from './check.js';
import { checkOpenphish, feedIndexOf, OPENPHISH_SYMBOL } from './openphish.js';
import type { FeedIndex } from './openphish.js';
import { checkPhishtank, PHISHTANK_SYMBOL } from './phishtank.js';
import { feedUrls } from './url-parts.js';

/**
 * Links that show one site and lead to another, and URLs listed by the phishing feeds (Rspamd
 * phishing.lua): PhishTank over DNS, OpenPhish as a map.
 */
export const phishingModule = defineModule<PhishingConfig>({
  name: 'phishing',
  config: PhishingConfig,
  symbols: PHISHING_SYMBOLS,
  async setup(ctx) {
    const cfg = ctx.config;
    const phishing = makePhishingCheck(cfg);
    let openphish: (() => FeedIndex) | undefined;
    if (cfg.openphish_enabled) {
      const map = await ctx.maps.add({ url: cfg.openphish_url ?? cfg.openphish_map, kind: 'set', description: 'OpenPhish feed (phishing URLs, one a line)' });
      openphish = feedIndexOf(map);
    }
    const feeds = cfg.phishtank_enabled || openphish !== undefined;
    ctx.symbol({
      name: 'PHISHING_CHECK',
      stage: 'filters',
      ...(cfg.phishtank_enabled ? { flags: ['coro' as const] } : {}),
      inserts: [cfg.symbol, OPENPHISH_SYMBOL, PHISHTANK_SYMBOL],
      check: (task: Task): void | Promise<void> => {
        phishing(task);
        if (!feeds) return;
        const urls = feedUrls(task.message.urls);
        if (openphish) checkOpenphish(task, urls, openphish());
        if (cfg.phishtank_enabled) return checkPhishtank(task, urls, cfg.phishtank_suffix);
      },
    });
  },
});
