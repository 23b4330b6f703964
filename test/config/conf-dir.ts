// Real temporary configuration directories for config and CLI tests.

import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** Writes `files` (relative path → content) into a fresh directory and returns its path. */
export async function makeConfDir(files: Record<string, string | Buffer>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mailsift-conf-'));
  for (const [rel, content] of Object.entries(files)) {
    const p = join(dir, rel);
    await mkdir(dirname(p), { recursive: true });
    await writeFile(p, content);
  }
  return dir;
}

export async function removeConfDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}
