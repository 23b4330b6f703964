// Reads a golden exchange from /work/shared/fixtures/controller/<name>.md: the request as sent
// and the reply's status line, headers and raw body, for replay against mailsift.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const CONTROLLER_FIXTURES = process.env.MAILSIFT_FIXTURES ? join(process.env.MAILSIFT_FIXTURES, 'controller') : '/work/shared/fixtures/controller';

export interface GoldenExchange {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  status: number;
  reason: string;
  replyHeaders: Map<string, string>;
  /** Raw reply body when the fixture reproduces it (absent for abbreviated bodies). */
  replyBody?: string;
}

function block(md: string, heading: string): string | undefined {
  const at = md.indexOf(heading);
  if (at < 0) return undefined;
  const open = md.indexOf('```', at);
  const start = md.indexOf('\n', open) + 1;
  const end = md.indexOf('\n```', start);
  return md.slice(start, end);
}

/** Headers the harness sets itself (or that only describe the recording). */
const SKIP = new Set(['host', 'content-length', 'connection']);

export function readGolden(name: string): GoldenExchange {
  const md = readFileSync(join(CONTROLLER_FIXTURES, `${name}.md`), 'utf8');
  const req = block(md, '## Request')!;
  const [head, ...rest] = req.split('\n\n');
  const lines = head!.split('\n');
  const [method, path] = lines[0]!.split(' ');
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) {
    const i = l.indexOf(':');
    if (i <= 0) continue;
    if (!SKIP.has(l.slice(0, i).toLowerCase())) headers[l.slice(0, i)] = l.slice(i + 1).trim();
  }
  const resp = block(md, '## Response (raw status line and headers)')!.split('\n');
  const m = /^HTTP\/1\.1 (\d{3}) (.*)$/.exec(resp[0]!)!;
  const replyHeaders = new Map<string, string>();
  for (const l of resp.slice(1)) {
    const i = l.indexOf(':');
    if (i > 0) replyHeaders.set(l.slice(0, i).toLowerCase(), l.slice(i + 1).trim());
  }
  const g: GoldenExchange = { method: method!, path: path!, headers, body: rest.join('\n\n'), status: Number(m[1]), reason: m[2]!, replyHeaders };
  const body = block(md, '## Response body (raw bytes as received)');
  if (body !== undefined && !md.includes('Only its first')) g.replyBody = body;
  return g;
}
