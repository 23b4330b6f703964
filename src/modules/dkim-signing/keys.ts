// Where a domain's selector and private key come from: the `domain` table, the selector/path
// maps (maps framework: files or http, reloaded when they change), or the fallback selector and
// path template. Keys are read once and re-read after KEY_RELOAD_MS so a rotated key file is
// picked up without a restart.

import { readFile } from 'node:fs/promises';
import type { MapHandle, ModuleMaps } from '../../plugin-api/index.js';
import type { DkimSigningConfig } from './config.js';

/** How long a key read from disk is trusted before it is read again. */
export const KEY_RELOAD_MS = 60_000;
export interface SigningKey { selector: string; privateKey: string }

/** The selector and path maps of the config, declared through the maps framework (`domain value` lines). */
export async function openKeyMaps(cfg: DkimSigningConfig, maps: ModuleMaps): Promise<{ selectors?: MapHandle; paths?: MapHandle }> {
  const [selectors, paths] = await Promise.all([
    cfg.selector_map ? maps.add({ url: cfg.selector_map, kind: 'hash', description: 'dkim_signing selectors' }) : undefined,
    cfg.path_map ? maps.add({ url: cfg.path_map, kind: 'hash', description: 'dkim_signing key paths' }) : undefined,
  ]);
  return { ...(selectors ? { selectors } : {}), ...(paths ? { paths } : {}) };
}

export class KeyStore {
  readonly #cfg: DkimSigningConfig;
  readonly #selectorMap: MapHandle | undefined;
  readonly #pathMap: MapHandle | undefined;
  readonly #cache = new Map<string, { pem: string; at: number }>();

  constructor(cfg: DkimSigningConfig, maps: { selectors?: MapHandle; paths?: MapHandle } = {}) {
    this.#cfg = cfg;
    this.#selectorMap = maps.selectors;
    this.#pathMap = maps.paths;
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
    const selector = this.#selectorMap?.get(d) ?? this.#cfg.selector;
    const template = this.#pathMap?.get(d) ?? this.#cfg.path;
    if (!selector || !template) return undefined;
    const pem = await this.#read(template.replaceAll('$domain', d).replaceAll('$selector', selector));
    return pem ? { selector, privateKey: pem } : undefined;
  }
}
