// A fuzzy_check rule compiled once at load: upstreams parsed, keys derived, flag mappings
// indexed, encryption keys decoded.
import { decodePublicKey, generateKeypair, type KexKeypair } from '../../crypto/keypair.js';
import { parseUpstream, type FuzzyUpstream } from './client.js';
import { fuzzyKeys, type FuzzyAlgorithm, type FuzzyKeys } from './digest.js';
import type { FuzzyCheckConfig, FuzzyRuleConfig } from './rule-config.js';

export interface FlagMapping {
  symbol: string;
  hitsLimit: number;
}

export interface HashPolicy {
  minBytes: number;
  minLength: number;
  textMultiplier: number;
  minWidth: number;
  minHeight: number;
  mimeTypes: RegExp[];
  scanArchives: boolean;
  shortTextDirectHash: boolean;
  textShingles: boolean;
  skipImages: boolean;
  noSubject: boolean;
}

export interface FuzzyRule {
  name: string;
  readServers: FuzzyUpstream[];
  writeServers: FuzzyUpstream[];
  symbol: string;
  hitsLimit: number;
  mappings: Map<number, FlagMapping>;
  algorithm: FuzzyAlgorithm;
  keys: FuzzyKeys;
  serverPublicKey?: Uint8Array;
  /** Ephemeral keypair of this process for the rule (Rspamd makes one per rule at load). */
  localKeypair?: KexKeypair;
  readOnly: boolean;
  skipUnknown: boolean;
  weightThreshold?: number;
  skipHashes: Set<string>;
  policy: HashPolicy;
  timeoutMs: number;
  retransmits: number;
}

function globToRegExp(glob: string): RegExp {
  const body = glob.toLowerCase().replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}

export function compileRule(name: string, r: FuzzyRuleConfig, mod: FuzzyCheckConfig): FuzzyRule {
  const read = r.read_servers ?? r.servers ?? [];
  const write = r.write_servers ?? r.servers ?? [];
  if (read.length === 0 && write.length === 0) throw new RangeError(`fuzzy rule ${name}: no servers`);
  const hitsLimit = r.hits_limit ?? r.max_score ?? 0;
  const mappings = new Map<number, FlagMapping>();
  for (const [symbol, m] of Object.entries(r.fuzzy_map)) {
    mappings.set(m.flag, { symbol, hitsLimit: m.hits_limit ?? m.max_score ?? hitsLimit });
  }
  const rule: FuzzyRule = {
    name,
    readServers: read.map(parseUpstream),
    writeServers: write.map(parseUpstream),
    symbol: r.symbol ?? mod.symbol,
    hitsLimit,
    mappings,
    algorithm: r.algorithm === 'siphash' ? 'old' : r.algorithm,
    keys: fuzzyKeys(r.fuzzy_key, r.fuzzy_shingles_key),
    readOnly: r.read_only,
    skipUnknown: r.skip_unknown,
    skipHashes: new Set(r.skip_hashes.map((h) => h.toLowerCase())),
    policy: {
      minBytes: r.min_bytes,
      minLength: r.min_length,
      textMultiplier: r.text_multiplier,
      minWidth: r.min_width,
      minHeight: r.min_height,
      mimeTypes: r.mime_types.map(globToRegExp),
      scanArchives: r.scan_archives,
      shortTextDirectHash: r.short_text_direct_hash,
      textShingles: r.text_shingles,
      skipImages: r.skip_images,
      noSubject: r.no_subject,
    },
    timeoutMs: (r.timeout ?? mod.timeout) * 1000,
    retransmits: r.retransmits ?? mod.retransmits,
  };
  if (r.weight_threshold !== undefined) rule.weightThreshold = r.weight_threshold;
  if (r.encryption_key) {
    const pk = decodePublicKey(r.encryption_key);
    if (!pk) throw new RangeError(`fuzzy rule ${name}: encryption_key is not a valid public key`);
    rule.serverPublicKey = pk;
    rule.localKeypair = generateKeypair();
  }
  return rule;
}

export function compileRules(cfg: FuzzyCheckConfig): FuzzyRule[] {
  return Object.entries(cfg.rules).map(([name, r]) => compileRule(name, r, cfg));
}

/** The flag a symbol name maps to in any rule (case-insensitive), for `Symbol:` learn requests. */
export function flagForSymbol(rules: readonly FuzzyRule[], symbol: string): number | undefined {
  const want = symbol.toLowerCase();
  for (const r of rules) for (const [flag, m] of r.mappings) if (m.symbol.toLowerCase() === want) return flag;
  return undefined;
}
