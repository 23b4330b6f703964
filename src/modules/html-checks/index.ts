import { defineModule } from '../../plugin-api/index.js';
import type { Task } from '../../plugin-api/index.js';
import { HtmlChecksConfig } from './config.js';
import { HTML_CHECKS_SYMBOLS } from './symbols.js';
import {
  checkDataUri,
  checkEmptyImage,
  checkExtCss,
  checkHttpToHttps,
  checkHttpToIp,
  checkImageOnly,
  checkShortLinkImg,
  checkSuspiciousImages,
  checkVisibility,
} from './check.js';

/** HTML content heuristics (Rspamd rules/html.lua). */
export const htmlChecksModule = defineModule<HtmlChecksConfig>({
  name: 'html_checks',
  config: HtmlChecksConfig,
  symbols: HTML_CHECKS_SYMBOLS,
  setup(ctx) {
    const rules: Array<[string, string[], (task: Task) => void]> = [
      ['HTML_SHORT_LINK_IMG', ['HTML_SHORT_LINK_IMG_1', 'HTML_SHORT_LINK_IMG_2', 'HTML_SHORT_LINK_IMG_3'], checkShortLinkImg],
      ['R_EMPTY_IMAGE', ['R_EMPTY_IMAGE'], checkEmptyImage],
      ['R_SUSPICIOUS_IMAGES', ['R_SUSPICIOUS_IMAGES'], checkSuspiciousImages],
      ['HTML_IMAGE_ONLY', ['HTML_IMAGE_ONLY'], checkImageOnly],
      ['EXT_CSS', ['EXT_CSS'], checkExtCss],
      ['HTTP_TO_HTTPS', ['HTTP_TO_HTTPS'], checkHttpToHttps],
      ['HTTP_TO_IP', ['HTTP_TO_IP'], checkHttpToIp],
      ['HTML_VISIBLE_CHECKS', ['R_WHITE_ON_WHITE', 'MANY_INVISIBLE_PARTS', 'ZERO_FONT'], checkVisibility],
    ];
    if (ctx.config.data_uri) rules.push(['HAS_DATA_URI_CHECK', ['HAS_DATA_URI', 'DATA_URI_OBFU'], checkDataUri]);
    for (const [name, inserts, check] of rules) {
      ctx.symbol({ name, stage: 'filters', inserts, check: (task) => { if (!task.meta.raw) check(task); } });
    }
  },
});
