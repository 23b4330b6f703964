// `npm run bench:accuracy -- --rules-only`: the built-in rules alone (no Bayes, no fuzzy) on the
// development split, with DNS answered NXDOMAIN at once by a loopback server holding an empty zone,
// so network rules (RBL, SPF, DKIM, DMARC) run their real code paths but cannot hit.
import { writeFile } from 'node:fs/promises';
import type { LoadedConfig } from '../src/config/load.js';
import { createEngine } from '../src/engine/index.js';
import { createMapRegistry } from '../src/maps/index.js';
import { builtinModules } from '../src/modules/index.js';
import { emptyMeta } from '../src/plugin-api/index.js';
import { createNetServices } from '../src/net/index.js';
import { StoreError, type Stores } from '../src/storage/types.js';
import { startDnsServer } from '../test/helpers/dns-server.js';
import { rocAuc } from './accuracy-metrics.js';
import type { CorpusMessage } from './corpus.js';
import { recordedEnvelope } from './recorded-envelope.js';

/** Modules that learn from mail; the rules-only run measures what is left without them. */
const LEARNING_MODULES = new Set(['bayes', 'fuzzy_check', 'fuzzy-check']);
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
/** How many symbols to list per class in the frequency table. */
const TOP_SYMBOLS = 40;

/** Every store is down in this run: any use fails as an unreachable store would. */
function downStores(): Stores {
  const down = new Proxy({}, {
    get: (_t, prop) => (prop === 'then' ? undefined : () => Promise.reject(new StoreError('STORE_UNAVAILABLE', 'not configured in the rules-only benchmark'))),
  });
  // The Proxy stands in for all four stores; each method rejects.
  const s = down as Stores['bayes'];
  return { bayes: s, fuzzy: down as Stores['fuzzy'], history: down as Stores['history'], kv: down as Stores['kv'], close: async () => {} };
}

interface RulesScored { msg: CorpusMessage; score: number; symbols: Array<{ name: string; score: number }> }

export interface RulesOnlyOptions {
  verbose?: boolean;
  /**
   * Pass the envelope the receiving MTA recorded. Off by default: with every DNS answer NXDOMAIN,
   * a sender IP makes each rDNS/HELO/SPF lookup fail, which no real set-up sees.
   */
  recordedEnvelope?: boolean;
  /** Write every scan's symbols and scores to this JSON file (input for score tuning). */
  dumpJson?: string;
}

export async function runRulesOnly(cfg: LoadedConfig, corpus: CorpusMessage[], addHeader: number, opts: RulesOnlyOptions = {}): Promise<void> {
  const dns = await startDnsServer({ zone: {} });
  try {
    const modules = builtinModules.filter((m) => !LEARNING_MODULES.has(m.name));
    const net = createNetServices({ dns: { ...cfg.engine.dns, servers: [dns.address], retransmits: 0 } });
    const maps = createMapRegistry({ baseDir: cfg.dir, log: quiet }); // shipped map paths are relative to the config dir
    const engine = await createEngine(cfg.engine, modules, { stores: downStores(), log: quiet, net, maps });
    const scored: RulesScored[] = [];
    for (const msg of corpus) {
      const r = await engine.scan(msg.bytes, opts.recordedEnvelope ? recordedEnvelope(msg.bytes) : emptyMeta());
      scored.push({ msg, score: r.score, symbols: r.symbols.map((s) => ({ name: s.name, score: s.score })) });
    }
    await net.close();
    if (opts.dumpJson) await writeFile(opts.dumpJson, JSON.stringify(scored.map((x) => ({ name: x.msg.name, group: x.msg.group, score: x.score, symbols: x.symbols }))));
    report(scored, addHeader, opts.verbose === true, opts.recordedEnvelope ? 'envelope from the recorded Received/Return-Path' : 'empty envelope');
  } finally {
    await dns.close();
  }
}

function report(scored: RulesScored[], addHeader: number, verbose: boolean, envelope: string): void {
  const ham = scored.filter((s) => s.msg.group !== 'spam-1');
  const spam = scored.filter((s) => s.msg.group === 'spam-1');
  const fp = ham.filter((s) => s.score >= addHeader);
  const tp = spam.filter((s) => s.score >= addHeader);
  const pct = (a: number, b: number): string => `${((100 * a) / b).toFixed(2)} %`;
  console.log(`rules only (no Bayes, no fuzzy; DNS NXDOMAIN; ${envelope}): ${scored.length} messages (ham ${ham.length}, spam ${spam.length}), add header threshold ${addHeader}`);
  console.log(`false positives (ham at or above threshold): ${fp.length}/${ham.length} = ${pct(fp.length, ham.length)}`);
  console.log(`spam recall (spam at or above threshold): ${tp.length}/${spam.length} = ${pct(tp.length, spam.length)}`);
  console.log(`ROC-AUC of the score: ${rocAuc(spam.map((s) => s.score), ham.map((s) => s.score)).toFixed(5)}`);
  for (const s of fp) console.log(`  FP ${s.msg.name} score ${s.score.toFixed(2)} ${s.symbols.filter((x) => x.score !== 0).map((x) => `${x.name}(${x.score.toFixed(2)})`).join(' ')}`);
  if (!verbose) return;
  // Per-symbol hit counts on ham and spam, to see which rules separate and which misfire.
  const counts = new Map<string, { ham: number; spam: number; score: number }>();
  for (const s of scored) {
    for (const x of s.symbols) {
      const c = counts.get(x.name) ?? { ham: 0, spam: 0, score: x.score };
      if (s.msg.group === 'spam-1') c.spam++;
      else c.ham++;
      counts.set(x.name, c);
    }
  }
  const rows = [...counts].sort((a, b) => b[1].ham + b[1].spam - (a[1].ham + a[1].spam)).slice(0, TOP_SYMBOLS * 3);
  console.log('symbol hits: name score ham% spam%');
  for (const [name, c] of rows) console.log(`  ${name} ${c.score.toFixed(2)} ${pct(c.ham, ham.length)} ${pct(c.spam, spam.length)}`);
}
