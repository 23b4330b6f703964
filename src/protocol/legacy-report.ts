// The body of a spamc REPORT reply (`spamc -R`): SpamAssassin's "Content analysis details"
// table, one row per symbol, from the scan result object alone.

import { jsonObject, num, oneLine, own, symbolEntries, type JsonObject } from './result-json.js';

/** Width of a report line; descriptions wrap to stay inside it, as SpamAssassin's do. */
const REPORT_WIDTH = 78;
/** Where the description column starts (`pts` 4, space, name 22, space). */
const DESCRIPTION_COLUMN = 28;
/**
 * Characters of description and options shown per symbol: options can carry whole URLs or
 * header values, and a report is for a person to read, not a dump.
 */
const MAX_DESCRIPTION = 400;

function describe(sym: JsonObject): string {
  const parts: string[] = [];
  const d = own(sym, 'description');
  if (typeof d === 'string' && d.length > 0) parts.push(d);
  const opts = own(sym, 'options');
  if (Array.isArray(opts) && opts.length > 0) parts.push(`[${opts.map((o) => (typeof o === 'string' ? o : JSON.stringify(o))).join(', ')}]`);
  let text = oneLine(parts.join(' '));
  if (text.length > MAX_DESCRIPTION) text = `${text.slice(0, MAX_DESCRIPTION - 3)}...`;
  return text;
}

/** Words of `text` in lines of at most `width` characters (a longer word gets a line of its own). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let cur = '';
  // The description is capped above, so this loop is too.
  for (const word of text.split(' ')) {
    if (word.length === 0) continue;
    if (cur.length > 0 && cur.length + 1 + word.length > width) {
      lines.push(cur);
      cur = word;
    } else {
      cur = cur.length > 0 ? `${cur} ${word}` : word;
    }
  }
  if (cur.length > 0) lines.push(cur);
  return lines;
}

export function renderReport(r: JsonObject): string {
  const rows = symbolEntries(r).map(([name, sym]) => ({ name: oneLine(name), score: num(own(sym, 'score')), desc: describe(sym) }));
  // Highest score first, as SpamAssassin lists its rules; ties by name for a stable report.
  rows.sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  let s = `Content analysis details:   (${num(own(r, 'score')).toFixed(2)} points, ${num(own(r, 'required_score')).toFixed(2)} required)\n`;
  const action = own(r, 'action');
  if (typeof action === 'string') s += `Action: ${oneLine(action)}\n`;
  const messages = jsonObject(own(r, 'messages'));
  if (messages) for (const text of Object.values(messages)) if (typeof text === 'string') s += `Message: ${oneLine(text)}\n`;
  s += '\n pts rule name              description\n';
  s += `${'-'.repeat(4)} ${'-'.repeat(22)} ${'-'.repeat(REPORT_WIDTH - DESCRIPTION_COLUMN)}\n`;
  const indent = ' '.repeat(DESCRIPTION_COLUMN);
  for (const row of rows) {
    const lead = `${row.score.toFixed(1).padStart(4)} ${row.name.padEnd(22)} `;
    // A name longer than its column pushes the first line's description right: it wraps sooner.
    const first = wrap(row.desc, Math.max(1, REPORT_WIDTH - lead.length));
    const rest = wrap(first.slice(1).join(' '), REPORT_WIDTH - DESCRIPTION_COLUMN);
    s += `${lead}${first[0] ?? ''}`.trimEnd() + '\n';
    for (const l of rest) s += `${indent}${l}\n`;
  }
  return s;
}
