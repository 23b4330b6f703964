import type { SymbolDef } from '../../plugin-api/index.js';

/** Rspamd 3.4 rules/html.lua and rules/regexp/misc.lua: scores and descriptions. */
export const HTML_CHECKS_SYMBOLS: Record<string, SymbolDef> = {
  HTML_SHORT_LINK_IMG_1: { score: 2.0, group: 'html', description: 'Short html part (0..1K) with a link to an image' },
  HTML_SHORT_LINK_IMG_2: { score: 1.0, group: 'html', description: 'Short html part (1K..1.5K) with a link to an image' },
  HTML_SHORT_LINK_IMG_3: { score: 0.5, group: 'html', description: 'Short html part (1.5K..2K) with a link to an image' },
  R_EMPTY_IMAGE: { score: 2.0, group: 'html', description: 'Message contains empty parts and image' },
  R_SUSPICIOUS_IMAGES: { score: 5.0, group: 'html', description: 'Message contains many suspicious messages' },
  // mailsift's own (SpamAssassin's HTML_IMAGE_ONLY_* family); score from the development split.
  HTML_IMAGE_ONLY: { score: 2.5, group: 'html', description: 'HTML shows pictures with little text (under 800 characters in every part)' },
  EXT_CSS: { score: 1.0, group: 'html', description: 'Message contains external CSS reference' },
  HTTP_TO_HTTPS: { score: 0.5, group: 'html', description: 'Anchor text contains different scheme to target URL' },
  HTTP_TO_IP: { score: 1.0, group: 'html', description: 'Anchor points to an IP address' },
  R_WHITE_ON_WHITE: { score: 4.0, group: 'html', description: 'Message contains low contrast text' },
  ZERO_FONT: { score: 1.0, group: 'html', description: 'Zero sized font used' },
  MANY_INVISIBLE_PARTS: { score: 1.0, group: 'html', description: 'Many parts are visually hidden' },
  HAS_DATA_URI: { score: 0.0, group: 'html', description: 'Has Data URI encoding' },
  DATA_URI_OBFU: { score: 2.0, group: 'html', description: 'Uses Data URI encoding to obfuscate plain or HTML in base64' },
};
