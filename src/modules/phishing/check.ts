// PHISHING: weigh every link whose text shows another site's URL (Rspamd phishing.lua) and mark
// the link's URL `phished` for later rules.
import type { Task } from '../../plugin-api/index.js';
import type { PhishingConfig } from './config.js';
import { phishedLink } from './displayed.js';
import { phishingWeight } from './weight.js';

/**
 * A path naming a click-tracking endpoint (`/Click?q=…`, `/clickthrough/…`, `/track/…`,
 * `/redirect?…`): newsletters route every advertiser link through their own counter, so the shown
 * site and the link's host differ by design.
 */
const TRACKER_PATH = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]+\/(?:[^?#]*\/)?(?:click|track|redirect)[a-z]*(?:[/?#]|$)/i;

export function isClickTracker(href: string): boolean {
  return TRACKER_PATH.test(href);
}

/** The PHISHING check alone; the feeds run after it, since the OpenPhish 0.1 case reads its `phished` marks. */
export function makePhishingCheck(cfg: PhishingConfig): (task: Task) => void {
  const strict = new Set(cfg.strict_domains.map((d) => d.toLowerCase()));
  const exceptions = new Set(cfg.exceptions.map((d) => d.toLowerCase()));
  return (task) => {
    let best: { weight: number; option: string } | undefined;
    const phished = new Set<string>();
    for (const tp of task.message.textParts) {
      for (const link of tp.html?.links ?? []) {
        const p = phishedLink(link.href, link.text);
        if (!p) continue;
        phished.add(p.real);
        if (exceptions.has(p.real) || exceptions.has(p.shownDomain)) continue;
        // A brand listed in strict_domains is protected even behind a tracker-looking path: a
        // phisher can put `/click` in a URL as easily as a newsletter does.
        if (!cfg.tracker_links && !strict.has(p.shownDomain) && isClickTracker(link.href)) continue;
        // A site name opening a longer text ("News.com: top stories") is a headline, not a
        // spoofed address; Rspamd counts it, which costs false positives on newsletters.
        if (!p.whole && !cfg.headline_links) continue;
        const weight = strict.has(p.shownDomain) ? 1 : phishingWeight(p.shownDomain, p.real);
        if (weight > 0 && (!best || weight > best.weight)) best = { weight, option: `${p.shownDomain}->${p.real}` };
      }
    }
    if (phished.size > 0) {
      for (const u of task.message.urls) if (u.tld && phished.has(u.tld) && u.displayed !== undefined) u.flags.add('phished');
    }
    if (best) task.insert(cfg.symbol, best.weight, best.option);
  };
}
