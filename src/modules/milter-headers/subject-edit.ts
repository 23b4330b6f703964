// Writes a new Subject into the message's header block (rewrite subject carried in the message
// itself, for MTAs that take the body block rather than applying the `subject` field).
import type { Message } from '../../plugin-api/index.js';
import type { Edit } from './body-edit.js';

/** RFC 2047 word length limit: keeps each encoded chunk within one folded line. */
const ENCODED_WORD_BYTES = 45;

function encodeSubject(subject: string, nl: string): string {
  if (/^[\x20-\x7e]*$/.test(subject)) return subject;
  const words: string[] = [];
  let chunk = '';
  for (const ch of subject) {
    if (Buffer.byteLength(chunk + ch) > ENCODED_WORD_BYTES) {
      words.push(chunk);
      chunk = '';
    }
    chunk += ch;
  }
  if (chunk) words.push(chunk);
  return words.map((w) => `=?UTF-8?B?${Buffer.from(w).toString('base64')}?=`).join(`${nl} `);
}

export function subjectEdit(msg: Message, subject: string): Edit {
  const raw = msg.raw;
  const nl = msg.newline;
  const line = Buffer.from(`Subject: ${encodeSubject(subject, nl)}${nl}`);
  const headerBlock = raw.subarray(0, msg.bodyOffset).toString('latin1');
  const m = /(^|\n)subject[ \t]*:/i.exec(headerBlock);
  if (!m) {
    // No Subject yet: add one as the last header, before the blank line.
    const blank = headerBlock.endsWith('\r\n\r\n') ? msg.bodyOffset - 2 : headerBlock.endsWith('\n\n') ? msg.bodyOffset - 1 : msg.bodyOffset;
    return { start: blank, end: blank, data: line };
  }
  const start = m.index + m[1]!.length;
  // The header runs until a line that does not start with whitespace (folding).
  let end = start;
  for (;;) {
    const eol = headerBlock.indexOf('\n', end);
    if (eol < 0) {
      end = headerBlock.length;
      break;
    }
    end = eol + 1;
    const next = headerBlock[end];
    if (next !== ' ' && next !== '\t') break;
  }
  return { start, end, data: line };
}
