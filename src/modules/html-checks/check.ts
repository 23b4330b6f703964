// HTML content rules of Rspamd's rules/html.lua: clickable images in short parts, an image with
// no text, image-heavy parts, external stylesheets, links whose text shows another scheme, links
// to bare IP addresses; and `data:` URIs in the raw body (rules/regexp/misc.lua).
import type { Task, TextPart } from '../../plugin-api/index.js';

/** Text-length bands (characters) of HTML_SHORT_LINK_IMG_1/2/3. */
const SHORT_BANDS: Array<[string, number, number]> = [
  ['HTML_SHORT_LINK_IMG_1', 0, 1024],
  ['HTML_SHORT_LINK_IMG_2', 1024, 1536],
  ['HTML_SHORT_LINK_IMG_3', 1536, 2048],
];
/** Below this many characters of text a part counts as empty (R_EMPTY_IMAGE). */
const EMPTY_TEXT_CHARS = 50;
/** Width + height from which an image is large enough to carry the message by itself. */
const LARGE_IMAGE_DIM = 400;
/** Width + height from which a clickable embedded image counts (small ones are logos, spacers). */
const LINKED_IMAGE_DIM = 210;
/** Clickable images between these sums of width + height count as roughly dim/100 words of text. */
const PIC_DIM_MIN = 100;
const PIC_DIM_MAX = 3000;
/** HTML_IMAGE_ONLY: a message whose every text part is shorter than this many characters… */
const IMAGE_ONLY_MAX_TEXT = 800;
/** …and whose HTML shows between one and this many pictures (newsletters show dozens, and text). */
const IMAGE_ONLY_MAX_IMAGES = 20;
/** Width + height of a picture of known size below which it is a tracking pixel or a spacer. */
const PIXEL_DIM = 10;

const CSS_FILE = /^.*\.css(?:[?#].*)?$/i;
const HTTPS_TEXT = /^https:/i;
const HREF_TO_IP = /^https?:\/\/\d+\.\d+\.\d+\.\d+/i;
const DATA_URI_START = /data:/gi;
const URI_PARAM_END = /[; ]/g;
const DATA_URI_TEXT = /data:text\/(?:plain|html);base64,/i;

/**
 * Whether `body` matches /data:[^/]+\/[^; ]+;base64,/i, found in one pass. The regexp retried its
 * runs from every `data:` to the next `/` (and from there to the next `;` or blank): a body of
 * `data:` repeated took 9 s for 100 KB. From a `data:`, `[^/]+` can only end at the first `/`
 * and `[^; ]+` at the first `;` or blank after it, so every `data:` before one `/` meets the same
 * `/`, and the search jumps past it.
 */
export function hasDataUri(body: string): boolean {
  let paramEnd = -1;
  DATA_URI_START.lastIndex = 0;
  for (let m = DATA_URI_START.exec(body); m; m = DATA_URI_START.exec(body)) {
    const slash = body.indexOf('/', m.index + 5);
    if (slash < 0) return false;
    if (slash >= m.index + 6) {
      if (paramEnd <= slash) {
        URI_PARAM_END.lastIndex = slash + 1;
        paramEnd = URI_PARAM_END.exec(body)?.index ?? -1;
        if (paramEnd < 0) return false;
      }
      if (paramEnd >= slash + 2 && body.slice(paramEnd, paramEnd + 8).toLowerCase() === ';base64,') return true;
    }
    DATA_URI_START.lastIndex = slash + 1;
  }
  return false;
}

function htmlParts(task: Task): TextPart[] {
  return task.message.textParts.filter((p) => p.kind === 'html' && p.html !== undefined);
}

function words(text: string): number {
  const m = text.match(/\S+/g);
  return m ? m.length : 0;
}

export function checkShortLinkImg(task: Task): void {
  for (const p of htmlParts(task)) {
    const len = p.text.length;
    const band = SHORT_BANDS.find(([, lo, hi]) => len >= lo && len < hi);
    if (!band) continue;
    // Rspamd 3.4 counts only embedded pictures (cid:, data:) of a known size: a remote image in a
    // link is what every HTML newsletter has (its logo), and one of unknown size may be a spacer.
    const hit = (p.html!.imageTags ?? []).some((i) => i.linked && i.embedded && i.width + i.height >= LINKED_IMAGE_DIM);
    if (hit) {
      task.insert(band[0], 1);
      return;
    }
  }
}

export function checkEmptyImage(task: Task): void {
  for (const p of htmlParts(task)) {
    if (p.text.length >= EMPTY_TEXT_CHARS) continue;
    if ((p.html!.imageTags ?? []).some((i) => !i.linked && i.width + i.height >= LARGE_IMAGE_DIM)) {
      task.insert('R_EMPTY_IMAGE', 1);
      return;
    }
  }
}

export function checkSuspiciousImages(task: Task): void {
  for (const p of htmlParts(task)) {
    let picWords = 0;
    for (const i of p.html!.imageTags ?? []) {
      const dim = i.width + i.height;
      if (i.linked && dim > PIC_DIM_MIN && dim < PIC_DIM_MAX) picWords += dim / 100;
    }
    const total = words(p.text) + picWords;
    if (total === 0) continue;
    const rel = picWords / total;
    if (rel > 0.5) {
      task.insert('R_SUSPICIOUS_IMAGES', (rel - 0.5) * 2);
      return;
    }
  }
}

/**
 * Mail that says what it has to say in pictures: an HTML part with one to IMAGE_ONLY_MAX_IMAGES
 * pictures (tracking pixels and spacers not counted) in a message with no text part of
 * IMAGE_ONLY_MAX_TEXT characters or more. SpamAssassin's HTML_IMAGE_ONLY_* family measures the
 * same; Rspamd has no rule for remote pictures (HTML_SHORT_LINK_IMG counts embedded ones only).
 */
export function checkImageOnly(task: Task): void {
  const parts = task.message.textParts;
  if (parts.some((p) => p.text.length >= IMAGE_ONLY_MAX_TEXT)) return;
  for (const p of htmlParts(task)) {
    if (p.html!.linksTruncated) continue;
    const pictures = (p.html!.imageTags ?? []).filter((i) => i.width === 0 || i.height === 0 || i.width + i.height >= PIXEL_DIM).length;
    if (pictures >= 1 && pictures <= IMAGE_ONLY_MAX_IMAGES) {
      task.insert('HTML_IMAGE_ONLY', 1, `${pictures} pictures, ${p.text.length} characters`);
      return;
    }
  }
}

export function checkExtCss(task: Task): void {
  for (const p of htmlParts(task)) {
    if ((p.html!.linkTags ?? []).some((href) => CSS_FILE.test(href))) {
      task.insert('EXT_CSS', 1);
      return;
    }
  }
}

export function checkHttpToHttps(task: Task): void {
  for (const p of htmlParts(task)) {
    for (const l of p.html!.links) {
      // The text promises https; the link itself is plain http.
      if (HTTPS_TEXT.test(l.text) && /^http:/i.test(l.href)) {
        let host = '';
        try {
          host = new URL(l.href).hostname;
        } catch {
          // An unparsable href still shows the mismatch; report without a host.
        }
        task.insert('HTTP_TO_HTTPS', 1, host || undefined);
        return;
      }
    }
  }
}

export function checkHttpToIp(task: Task): void {
  for (const p of htmlParts(task)) {
    if (p.html!.links.some((l) => HREF_TO_IP.test(l.href))) {
      task.insert('HTTP_TO_IP', 1);
      return;
    }
  }
}

export function checkDataUri(task: Task): void {
  const m = task.message;
  if (m.bodyOffset >= m.raw.length) return;
  // latin1 keeps byte offsets and is enough for an ASCII pattern.
  const body = m.raw.toString('latin1', m.bodyOffset);
  if (!hasDataUri(body)) return;
  task.insert('HAS_DATA_URI', 1);
  if (DATA_URI_TEXT.test(body)) task.insert('DATA_URI_OBFU', 1);
}

/** MANY_INVISIBLE_PARTS's strength for 1…10 hidden blocks (Rspamd rules/html.lua). */
const INVISIBLE_RATES = [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0];
/** ZERO_FONT's strength for 1…5 zero-font blocks; more than ten is full strength, six to ten as five. */
const ZERO_FONT_RATES = [0.1, 0.2, 0.2, 0.3, 0.5];
/** Share of the text drawn in its background's colour above which R_WHITE_ON_WHITE fires. */
const LOW_CONTRAST_MIN_SHARE = 0.1;
/** Share at which R_WHITE_ON_WHITE reaches full strength. */
const LOW_CONTRAST_FULL_SHARE = 0.5;

/**
 * Text a reader can't see (rules/html.lua's HTML_VISIBLE_CHECKS): R_WHITE_ON_WHITE by the share
 * of the text drawn in its background's colour, MANY_INVISIBLE_PARTS by the number of hidden or
 * low-contrast blocks, ZERO_FONT by the number of zero-sized ones.
 */
export function checkVisibility(task: Task): void {
  let invisible = 0;
  let zero = 0;
  // Visible text of every text part; low-contrast text moves from it to `lowContrast`.
  let normal = 0;
  let lowContrast = 0;
  let bestShare = 0;
  let option: string | undefined;
  for (const p of task.message.textParts) {
    normal += p.text.length;
    for (const b of p.html?.hiddenBlocks ?? []) {
      if (b.hidden) invisible++;
      if (b.zeroFont) zero++;
      if (!b.transparent) continue;
      invisible++;
      lowContrast += b.chars;
      normal -= b.chars;
      const share = lowContrast / Math.max(1, normal + lowContrast);
      if (share > bestShare) {
        bestShare = share;
        option = `${b.tag} color ${b.color} bgcolor ${b.background}`;
      }
    }
  }
  if (lowContrast > 0) {
    const share = lowContrast / Math.max(1, normal + lowContrast);
    if (share > LOW_CONTRAST_MIN_SHARE) task.insert('R_WHITE_ON_WHITE', Math.min(share, LOW_CONTRAST_FULL_SHARE) * 2, option);
  }
  if (invisible > 0) task.insert('MANY_INVISIBLE_PARTS', INVISIBLE_RATES[Math.min(invisible, 10) - 1]!, String(invisible));
  if (zero > 0) task.insert('ZERO_FONT', zero > 10 ? 1 : ZERO_FONT_RATES[Math.min(zero, 5) - 1]!, String(zero));
}
