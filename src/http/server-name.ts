// Default `Server:` header, `mailsift/<version>` in Rspamd's `rspamd/3.4` shape. The version
// is read once from the package manifest, found by walking up from this file (the layout
// differs between running from src/ with tsx and from dist/).

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Directories walked up looking for package.json (src/http → root is 2, dist/src/http is 3). */
const MAX_MANIFEST_DEPTH = 5;

function findVersion(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < MAX_MANIFEST_DEPTH; i++) {
    const p = join(dir, 'package.json');
    if (existsSync(p)) {
      try {
        const pkg = JSON.parse(readFileSync(p, 'utf8')) as { name?: string; version?: string };
        if (pkg.name === 'mailsift' && pkg.version) return pkg.version;
      } catch {
        return undefined;
      }
    }
    dir = dirname(dir);
  }
  return undefined;
}

export const DEFAULT_SERVER_NAME = `mailsift/${findVersion() ?? '0'}`;
