// The SMTP message of a rule: literal text with `${selector}` placeholders, compiled once.
// A placeholder's values are joined with `,`; one that yields nothing reads
// `((error extracting value))`, as in Rspamd's force_actions.

import type { CompiledSelector, Task } from '../../plugin-api/index.js';

type Piece = string | CompiledSelector;

/** Placeholders one message may hold: each runs a selector per matching message. */
export const MAX_MESSAGE_PLACEHOLDERS = 16;
const PLACEHOLDER = /\$\{(.*?)\}/g;

export interface CompiledMessage {
  render(task: Task): string;
}

export function compileMessage(text: string, compile: (selector: string) => CompiledSelector): CompiledMessage {
  const pieces: Piece[] = [];
  let last = 0;
  let count = 0;
  for (const m of text.matchAll(PLACEHOLDER)) {
    if (++count > MAX_MESSAGE_PLACEHOLDERS) throw new Error(`message has more than ${MAX_MESSAGE_PLACEHOLDERS} \${selector} placeholders`);
    pieces.push(text.slice(last, m.index), compile(m[1]!));
    last = m.index + m[0].length;
  }
  pieces.push(text.slice(last));
  if (pieces.length === 1) {
    const literal = text;
    return { render: () => literal };
  }
  return {
    render(task) {
      let out = '';
      for (const p of pieces) {
        if (typeof p === 'string') out += p;
        else out += p.flatten(task)?.join(',') ?? '((error extracting value))';
      }
      return out;
    },
  };
}
