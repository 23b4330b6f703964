// Where a domain's selector and private key come from: the `domain` table, the selector/path
// maps, or the fallback selector and path template. Keys are read once and re-read after
// KEY_RELOAD_MS so a rotated key file is picked up without a restart.

import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { DkimSigningConfig } from './config.js';

/** How long a key read from disk is trusted before it is read again. */
export const KEY_RELOAD_MS = 60_000;
/** Lines read from a selector/path map file: a stray huge file cannot eat the worker's memory. */
const MAX_MAP_LINES = 100_000;

export interface SigningKey { selector: string; privateKey: string }

/** `domain value` per line; `#` comments and blank lines ignored. */
export function readMapFile(path: string): Map<string, string> {
  const out = new Map<string, string>();
  const lines = readFileSync(path, 'utf8').split('\n');
  for (const raw of lines.slice(0, MAX_MAP_LINES)) {
    const line = raw.replace(/#.*/, '').trim();
    if (!line) continue;
    const [k, v] = line.split(/\s+/, 2);
    if (k && v) out.set(k.toLowerCase(), v);
  }
  return out;
}

export class KeyStore {
  readonly #cfg: DkimSigningConfig;
  readonly #selectorMap: Map<string, string>;
  readonly #pathMap: Map<string, string>;
  readonly #cache = new Map<string, { pem: string; at: number }>();

  constructor(cfg: DkimSigningConfig) {
    this.#cfg = cfg;
    this.#selectorMap = cfg.selector_map ? readMapFile(cfg.selector_map) : new Map();
    this.#pathMap = cfg.path_map ? readMapFile(cfg.path_map) : new Map();
  }

  async #read(path: string): Promise<string | undefined> {
    const hit = this.#cache.get(path);
    if (hit && Date.now() - hit.at < KEY_RELOAD_MS) return hit.pem;
    try {
      const pem = await readFile(path, 'utf8');
      this.#cache.set(path, { pem, at: Date.now() });
      return pem;
    } catch {
      return undefined;
    }
  }

  /** The selector and key for `domain`, or undefined when none is configured or readable. */
  async lookup(domain: string): Promise<SigningKey | undefined> {
    const d = domain.toLowerCase();
    const entry = this.#cfg.domain[d];
    if (entry) {
      const pem = entry.key ?? (await this.#read(entry.path!));
      return pem ? { selector: entry.selector, privateKey: pem } : undefined;
    }
    const selector = this.#selectorMap.get(d) ?? this.#cfg.selector;
    const template = this.#pathMap.get(d) ?? this.#cfg.path;
    if (!selector || !template) return undefined;
    const pem = await this.#read(template.replaceAll('$domain', d).replaceAll('$selector', selector));
    return pem ? { selector, privateKey: pem } : undefined;
  }
}
