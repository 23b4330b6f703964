// Where each store's SQLite file lives, which config key put it there, and why it cannot be
// used: a store that fails to open must name the file and the key to change, not only
// SQLite's "unable to open database file".

import { randomBytes } from 'node:crypto';
import { accessSync, constants, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import type { StoresConfigValue } from '../config-schema.js';

/** The SQLite file's name in data_dir when `stores.sqlite.path` is not set. */
export const DEFAULT_SQLITE_FILE = 'mailsift.sqlite';

export const STORE_NAMES = ['bayes', 'fuzzy', 'history', 'kv'] as const;
export type StoreName = (typeof STORE_NAMES)[number];

export interface SqliteLocation {
  /** Absolute path of the database file. */
  path: string;
  /** The mailsift.yaml key that chose it: `data_dir`, `stores.sqlite.path` or `stores.<store>.sqlite.path`. */
  key: string;
}

/** The store's database file and the key that chose it; undefined when the store is on Redis. */
export function sqliteLocation(dataDir: string, stores: StoresConfigValue, name: StoreName): SqliteLocation | undefined {
  const own = stores[name];
  if ((own.backend ?? stores.backend) !== 'sqlite') return undefined;
  const ownPath = own.sqlite?.path;
  const path = ownPath ?? stores.sqlite.path;
  const key = ownPath !== undefined ? `stores.${name}.sqlite.path` : path !== undefined ? 'stores.sqlite.path' : 'data_dir';
  const file = path ?? DEFAULT_SQLITE_FILE;
  return { path: isAbsolute(file) ? file : join(dataDir, file), key };
}

/** What to tell the administrator to change, by the key that chose the file. */
export function sqliteFix(loc: SqliteLocation): string {
  return loc.key === 'data_dir'
    ? 'set data_dir in mailsift.yaml to a directory mailsift can create and write'
    : `set ${loc.key} in mailsift.yaml to a file mailsift can create and write (relative paths are under data_dir)`;
}

function errCode(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : (err as Error).message;
}

/** Creates and removes a file in `dir`: the only test of writability that also holds for root. */
function probeWrite(dir: string): string | undefined {
  const probe = join(dir, `.mailsift-probe-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    writeFileSync(probe, '', { flag: 'wx' });
  } catch (err) {
    return errCode(err);
  }
  try {
    unlinkSync(probe);
  } catch {
    // The probe is empty and dot-named; failing to remove it does not make the directory unusable.
  }
  return undefined;
}

type Look = { kind: 'missing' } | { kind: 'file' | 'dir' } | { kind: 'error'; code: string };

/** What is at `p`; a path through a file (ENOTDIR) is missing here, the walk up finds the file. */
function look(p: string): Look {
  try {
    return { kind: statSync(p).isDirectory() ? 'dir' : 'file' };
  } catch (err) {
    const code = errCode(err);
    return code === 'ENOENT' || code === 'ENOTDIR' ? { kind: 'missing' } : { kind: 'error', code };
  }
}

/**
 * Why the database file at `path` cannot be opened for writing (created with its directory if
 * missing), or undefined when it can. Synchronous: runs once, before a server starts.
 */
export function sqliteFileProblem(path: string): string | undefined {
  const file = look(path);
  if (file.kind === 'error') return `${path} cannot be read (${file.code})`;
  if (file.kind === 'dir') return `${path} is a directory, not a database file`;
  if (file.kind === 'file') {
    try {
      accessSync(path, constants.R_OK | constants.W_OK);
    } catch (err) {
      return `${path} cannot be opened for writing (${errCode(err)})`;
    }
  }
  // The nearest existing ancestor decides: it must be a directory we can write in. The walk
  // ends at the root, so it runs at most once per component of the path.
  const dir = dirname(path);
  let at = dir;
  for (;;) {
    const st = look(at);
    if (st.kind === 'error') return `${at} cannot be read (${st.code})`;
    if (st.kind === 'file') return `${at} is a file, not a directory`;
    if (st.kind === 'dir') break;
    const up = dirname(at);
    if (up === at) return `${dir} cannot be created (nothing of it exists)`;
    at = up;
  }
  const denied = probeWrite(at);
  if (denied === undefined) return undefined;
  return at === dir ? `${dir} is not writable (${denied})` : `${dir} does not exist and cannot be created: ${at} is not writable (${denied})`;
}
