// Static files from `static_dir`: the web UI. (OPTIONS and the CORS header
// are answered for every path in index.ts.) A path is percent-decoded, normalised (`.`/`..` never climb above the
// root), resolved through symlinks, and served only if the real file lies inside the real
// static directory; anything else is the router's plain 404. Static files need no password.

import { existsSync } from 'node:fs';
import { open, realpath, stat } from 'node:fs/promises';
import { dirname, extname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Request, Reply } from '../../http/types.js';
import type { Logger } from '../../plugin-api/index.js';

/** Where `npm run build` puts mailsift's own web UI, relative to the package root (webui/vite.config.ts). */
export const BUILTIN_WEBUI_PATH = join('dist', 'webui');
/** Directories climbed from this file to find the package root (src/… or dist/src/…). */
const MAX_ROOT_CLIMB = 6;

/**
 * mailsift's own web UI, served at `/` when no `static_dir` is configured; undefined when it
 * has not been built (then `/` is the router's 404, as on a controller without static files).
 */
export function builtinWebuiDir(from = dirname(fileURLToPath(import.meta.url))): string | undefined {
  let dir = from;
  for (let i = 0; i < MAX_ROOT_CLIMB; i++) {
    if (existsSync(join(dir, 'package.json'))) {
      const ui = join(dir, BUILTIN_WEBUI_PATH);
      return existsSync(join(ui, 'index.html')) ? ui : undefined;
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return undefined;
}

/** Larger files are not served: the web UI's biggest file is well under 1 MiB. */
export const MAX_STATIC_FILE_BYTES = 16 * 1024 * 1024;

/**
 * Types by extension. Those Rspamd 3.4 sends (html, css, js, ico, png, jpg) keep its values;
 * the rest get their registered types where 3.4 said text/plain (the UI works with either).
 */
const MIME_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html',
  '.htm': 'text/html',
  '.css': 'text/css',
  '.js': 'application/javascript',
  '.mjs': 'application/javascript',
  '.ico': 'image/x-icon',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
  '.map': 'application/json',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.txt': 'text/plain',
};

export const NOT_FOUND: Reply = { status: 404, reason: 'Not found', contentType: 'text/plain', body: 'Not found' };

export function mimeTypeOf(path: string): string {
  return MIME_TYPES[extname(path)] ?? 'text/plain';
}

/** Request path → safe relative segments, or undefined when it cannot be a file name. */
export function normaliseStaticPath(rawPath: string): string[] | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    return undefined;
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return undefined;
  const out: string[] = [];
  for (const seg of decoded.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') out.pop();
    else out.push(seg);
  }
  return out;
}

function inside(root: string, real: string): boolean {
  return real === root || real.startsWith(root.endsWith(sep) ? root : root + sep);
}

async function resolveFile(root: string, segs: string[]): Promise<string | undefined> {
  const candidate = join(root, ...segs);
  let real: string;
  try {
    real = await realpath(candidate);
  } catch {
    return undefined;
  }
  if (!inside(root, real)) return undefined;
  const st = await stat(real).catch(() => undefined);
  if (!st) return undefined;
  if (st.isFile()) return real;
  if (!st.isDirectory()) return undefined;
  // A directory is tried once more with index.html (GET / serves the UI).
  const index = await realpath(join(real, 'index.html')).catch(() => undefined);
  if (!index || !inside(root, index)) return undefined;
  const ist = await stat(index).catch(() => undefined);
  return ist?.isFile() ? index : undefined;
}

/**
 * The static-file answer from `dir` for a path no endpoint matched: the file, a 304 when the
 * client's validator still matches, or 404.
 */
export async function serveStatic(dir: string, log: Logger, req: Request): Promise<Reply> {
  const segs = normaliseStaticPath(req.path);
  if (!segs) return NOT_FOUND;
  let root: string;
  try {
    root = await realpath(dir);
  } catch {
    log.warn('static_dir is not readable', { static_dir: dir });
    return NOT_FOUND;
  }
  const file = await resolveFile(root, segs);
  if (!file) return NOT_FOUND;
  const fh = await open(file, 'r').catch(() => undefined);
  if (!fh) return NOT_FOUND;
  try {
    const st = await fh.stat();
    if (!st.isFile() || st.size > MAX_STATIC_FILE_BYTES) return NOT_FOUND;
    // Validators let a browser revalidate cheaply; the body is then not sent again.
    const etag = `"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}"`;
    const lastModified = new Date(Math.floor(st.mtimeMs / 1000) * 1000).toUTCString();
    const headers: Array<[string, string]> = [
      ['ETag', etag],
      ['Last-Modified', lastModified],
    ];
    const inm = req.headers.first('if-none-match');
    const ims = req.headers.first('if-modified-since');
    const fresh = inm !== undefined ? inm.split(',').some((t) => t.trim() === etag || t.trim() === `W/${etag}`) : ims !== undefined && Date.parse(ims) >= Date.parse(lastModified);
    if (fresh) return { status: 304, reason: 'Not Modified', headers, body: '' };
    return { status: 200, contentType: mimeTypeOf(file), headers, body: await fh.readFile() };
  } finally {
    await fh.close();
  }
}
