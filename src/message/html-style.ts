// The presentation of one HTML element as far as hiding text goes: its text and background
// colours, font size and whether it is shown at all. Read from the element's `style`, `color`,
// `bgcolor` and `hidden` attributes and inherited from its parent, the way Rspamd's HTML blocks
// are (src/libserver/html/html_block.hxx): text no reader sees is left out of the part's text,
// text drawn in (nearly) its background's colour stays in it but is marked.
// Stylesheets (`<style>` rules matched by selector) are not applied: only inline presentation.
import namedColors from 'color-name';

/** A colour with alpha, each channel 0–255. */
export interface Rgba {
  r: number;
  g: number;
  b: number;
  a: number;
}

/** The computed presentation of an element. */
export interface StyleBlock {
  color: Rgba;
  background: Rgba;
  /** Font size in CSS pixels. */
  fontSize: number;
  /** `display: none`, `opacity` near 0 or the `hidden` attribute: nothing inside can be shown again. */
  removed: boolean;
  /** `visibility: hidden` (a descendant's `visibility: visible` shows it again). */
  invisible: boolean;
}

/** What one element declares; undefined: inherited. */
interface Declared {
  color?: Rgba;
  background?: Rgba;
  /** Pixels, or a factor of the parent's size (`%`, `em`) when `relative`. */
  fontSize?: { value: number; relative: boolean };
  removed?: boolean;
  visibility?: 'hidden' | 'visible';
}

const BLACK: Rgba = { r: 0, g: 0, b: 0, a: 255 };
const WHITE: Rgba = { r: 255, g: 255, b: 255, a: 255 };

/** The document's own block: black text on white, the mail client's default. */
export const ROOT_STYLE: StyleBlock = { color: BLACK, background: WHITE, fontSize: 16, removed: false, invisible: false };

/** Characters of one `style` attribute read; a real one is a few hundred, this bounds the split. */
const MAX_STYLE_CHARS = 4096;
/** Opacity under which nothing is visible (Rspamd: 0.1). */
const MIN_OPACITY = 0.1;
/** Alpha (of 255) under which a text colour is see-through, and over which a background counts. */
const MIN_ALPHA = 10;
/** Colour distance (0…~1.7, see `similarColors`) under which text can't be told from its background. */
const MIN_VISIBLE_DIFF = 0.1;

/** Pixels per unit, as a mail client would render them (em and rem are relative, below). */
const UNIT_PX: Record<string, number> = {
  px: 1, pt: 96 / 72, pc: 16, in: 96, cm: 96 / 2.54, mm: 9.6 / 2.54, q: 96 / 2.54 / 40,
  ex: 8, ch: 8, vw: 8, vh: 6, vmin: 6, vmax: 8,
};
/** The CSS absolute-size keywords in pixels. */
const FONT_KEYWORDS: Record<string, number> = {
  'xx-small': 9, 'x-small': 10, small: 13, medium: 16, large: 18, 'x-large': 24, 'xx-large': 32, 'xxx-large': 48,
};

function clampByte(n: number): number {
  return Math.max(0, Math.min(255, Math.round(n)));
}

/** One rgb() channel: a number 0–255 or a percentage. */
function channel(s: string): number | undefined {
  const m = /^(-?[\d.]+)(%?)$/.exec(s);
  if (!m) return undefined;
  const n = parseFloat(m[1]!);
  if (!Number.isFinite(n)) return undefined;
  return clampByte(m[2] ? (n * 255) / 100 : n);
}

/** An alpha value: 0–1 or a percentage → 0–255. */
function alpha(s: string): number | undefined {
  const m = /^(-?[\d.]+)(%?)$/.exec(s);
  if (!m) return undefined;
  const n = parseFloat(m[1]!);
  if (!Number.isFinite(n)) return undefined;
  return clampByte((m[2] ? n / 100 : n) * 255);
}

function hexColor(h: string): Rgba | undefined {
  if (!/^[0-9a-f]+$/i.test(h)) return undefined;
  const d = (i: number, len: number): number => parseInt(len === 1 ? h[i]! + h[i]! : h.slice(i, i + 2), 16);
  if (h.length === 3 || h.length === 4) return { r: d(0, 1), g: d(1, 1), b: d(2, 1), a: h.length === 4 ? d(3, 1) : 255 };
  if (h.length === 6 || h.length === 8) return { r: d(0, 2), g: d(2, 2), b: d(4, 2), a: h.length === 8 ? d(6, 2) : 255 };
  return undefined;
}

/**
 * A CSS or HTML-attribute colour: `#rgb[a]`, `#rrggbb[aa]`, a bare `rrggbb` (legacy attributes),
 * `rgb()`/`rgba()` in comma or space syntax, a named colour, `transparent`. Undefined otherwise.
 */
export function parseColor(value: string): Rgba | undefined {
  const v = value.trim().toLowerCase();
  if (v.startsWith('#')) return hexColor(v.slice(1));
  if (v === 'transparent') return { r: 0, g: 0, b: 0, a: 0 };
  const named = namedColors[v];
  if (named && Object.hasOwn(namedColors, v)) return { r: named[0], g: named[1], b: named[2], a: 255 };
  const fn = /^rgba?\(([^)]*)\)$/.exec(v);
  if (fn) {
    const parts = fn[1]!.split(/[\s,/]+/).filter((p) => p !== '');
    if (parts.length < 3 || parts.length > 4) return undefined;
    const [r, g, b] = [channel(parts[0]!), channel(parts[1]!), channel(parts[2]!)];
    const a = parts.length === 4 ? alpha(parts[3]!) : 255;
    if (r === undefined || g === undefined || b === undefined || a === undefined) return undefined;
    return { r, g, b, a };
  }
  if (v.length === 6) return hexColor(v);
  return undefined;
}

/** A font size: pixels, or a factor of the parent's size; undefined when it is none. */
function parseFontSize(value: string): Declared['fontSize'] {
  const v = value.trim().toLowerCase();
  const kw = FONT_KEYWORDS[v];
  if (kw !== undefined && Object.hasOwn(FONT_KEYWORDS, v)) return { value: kw, relative: false };
  if (v === 'smaller') return { value: 0.8, relative: true };
  if (v === 'larger') return { value: 1.2, relative: true };
  const m = /^([+-]?(?:\d+\.?\d*|\.\d+))([a-z%]*)$/.exec(v);
  if (!m) return undefined;
  const n = parseFloat(m[1]!);
  const unit = m[2]!;
  if (!Number.isFinite(n) || n < 0) return undefined;
  if (unit === '%') return { value: n / 100, relative: true };
  if (unit === 'em') return { value: n, relative: true };
  if (unit === 'rem') return { value: n * ROOT_STYLE.fontSize, relative: false };
  // A bare number is only valid for 0, but mail clients take it as pixels.
  if (unit === '') return { value: n, relative: false };
  const px = UNIT_PX[unit];
  return px !== undefined && Object.hasOwn(UNIT_PX, unit) ? { value: n * px, relative: false } : undefined;
}

/** The `font` shorthand: its size is the token before an optional `/line-height`. */
function fontShorthandSize(value: string): Declared['fontSize'] {
  for (const token of value.split(/\s+/)) {
    const size = parseFontSize(token.split('/')[0]!);
    if (size) return size;
  }
  return undefined;
}

/** The first colour among the words of a shorthand (`background: url(x) #fff no-repeat`). */
function shorthandColor(value: string): Rgba | undefined {
  for (const token of value.match(/rgba?\([^)]*\)|[^\s]+/gi) ?? []) {
    const c = parseColor(token);
    if (c) return c;
  }
  return undefined;
}

/** Reads a `style` attribute's declarations into `into`; later declarations win, `!important` is ignored. */
function readStyle(style: string, into: Declared): void {
  let shorthandBg: Rgba | undefined;
  let shorthandFont: Declared['fontSize'];
  for (const decl of style.slice(0, MAX_STYLE_CHARS).split(';')) {
    const colon = decl.indexOf(':');
    if (colon < 0) continue;
    const prop = decl.slice(0, colon).trim().toLowerCase();
    const value = decl.slice(colon + 1).replace(/!\s*important\s*$/i, '').trim();
    if (value === '') continue;
    switch (prop) {
      case 'display':
        if (value.toLowerCase() === 'none') into.removed = true;
        break;
      case 'visibility': {
        const v = value.toLowerCase();
        if (v === 'hidden' || v === 'collapse') into.visibility = 'hidden';
        else if (v === 'visible') into.visibility = 'visible';
        break;
      }
      case 'opacity': {
        const n = parseFloat(value);
        const o = value.endsWith('%') ? n / 100 : n;
        if (Number.isFinite(o) && o < MIN_OPACITY) into.removed = true;
        break;
      }
      case 'color':
      case 'font-color': {
        const c = parseColor(value);
        if (c) into.color = c;
        break;
      }
      case 'background-color':
      case 'bgcolor': {
        const c = parseColor(value);
        if (c) into.background = c;
        break;
      }
      case 'background':
        shorthandBg = shorthandColor(value) ?? shorthandBg;
        break;
      case 'font-size': {
        const s = parseFontSize(value);
        if (s) into.fontSize = s;
        break;
      }
      case 'font':
        shorthandFont = fontShorthandSize(value) ?? shorthandFont;
        break;
    }
  }
  // Shorthands fill in only what the longhands left unset.
  into.background ??= shorthandBg;
  into.fontSize ??= shorthandFont;
}

/** The presentation attributes of one element, as the renderer collects them. */
export interface PresentationAttributes {
  style?: string;
  color?: string;
  bgcolor?: string;
  hidden?: boolean;
}

/** The element's block: what it declares over what it inherits from `parent`. */
export function computeStyle(parent: StyleBlock, attrs: PresentationAttributes): StyleBlock {
  if (attrs.style === undefined && attrs.color === undefined && attrs.bgcolor === undefined && !attrs.hidden) return parent;
  const d: Declared = {};
  // Attributes first: an inline style overrides them.
  if (attrs.color !== undefined) d.color = parseColor(attrs.color);
  if (attrs.bgcolor !== undefined) d.background = parseColor(attrs.bgcolor);
  if (attrs.hidden) d.removed = true;
  if (attrs.style !== undefined) readStyle(attrs.style, d);
  const fontSize = d.fontSize === undefined ? parent.fontSize : d.fontSize.relative ? parent.fontSize * d.fontSize.value : d.fontSize.value;
  return {
    color: d.color ?? parent.color,
    // A see-through background shows its parent's.
    background: d.background && d.background.a > MIN_ALPHA ? d.background : parent.background,
    fontSize,
    removed: parent.removed || d.removed === true,
    invisible: d.visibility === undefined ? parent.invisible : d.visibility === 'hidden',
  };
}

/**
 * How far apart two colours look, about 0 (same) to 1.7 (black on white): a weighted RGB
 * distance whose red and blue weights shift with the mean red, which tracks perceived
 * difference better than plain RGB distance (the measure Rspamd uses for low-contrast text).
 */
export function colorDistance(x: Rgba, y: Rgba): number {
  const dr = (x.r - y.r) ** 2;
  const dg = (x.g - y.g) ** 2;
  const db = (x.b - y.b) ** 2;
  const meanRed = (x.r + y.r) / 2;
  return Math.sqrt(Math.max(0, 2 * dr + 4 * dg + 3 * db + (meanRed * (dr - db)) / 256)) / 256;
}

/** Not shown at all: its text is no part of what a reader sees. */
export function isHidden(s: StyleBlock): boolean {
  return s.removed || s.invisible || zeroFont(s);
}

/** Below one pixel: the glyphs have no size (Rspamd keeps font sizes as whole pixels). */
export function zeroFont(s: StyleBlock): boolean {
  return s.fontSize < 1;
}

/** Shown, but in a colour that is see-through or can't be told from its background. */
export function isTransparent(s: StyleBlock): boolean {
  if (s.color.a < MIN_ALPHA) return true;
  return s.background.a > MIN_ALPHA && colorDistance(s.color, s.background) < MIN_VISIBLE_DIFF;
}

/** `#rrggbb`, for a rule's option. */
export function hexOf(c: Rgba): string {
  return '#' + [c.r, c.g, c.b].map((n) => n.toString(16).padStart(2, '0')).join('');
}
