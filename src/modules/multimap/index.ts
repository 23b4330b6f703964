// multimap: rules that look task values up in maps (file, http(s), inline)
// and insert a symbol, a symbol named by the map value, or force an action.

import { dataRecord, defineModule } from '../../plugin-api/index.js';
import type { CompiledSelector, MapDefinition, MapHandle, MapKind, SymbolDef, Task } from '../../plugin-api/index.js';
import { isLocalAddress } from '../../module-helpers/local-address.js';
import { MultimapConfig } from './config.js';
import type { MultimapRule } from './config.js';
import { candidates, selectorCandidates } from './extract.js';
import { readValue } from './value.js';

function mapKind(rule: MultimapRule): MapKind {
  if (rule.regexp) return rule.multi ? 'regexp_multi' : 'regexp';
  if (rule.glob) return rule.multi ? 'glob_multi' : 'glob';
  const ipFilter = rule.filter === undefined || rule.filter === 'real_ip' || rule.filter === 'from_ip' || rule.filter === 'ip_addr';
  if (rule.type === 'ip' || (rule.type === 'received' && ipFilter)) return 'radix';
  return 'hash';
}

/** Looks like a source (path or URL) rather than an inline map entry. */
function isSource(s: string, regexpRule: boolean): boolean {
  if (/^(?:[a-z_]+;)?(?:https?:\/\/|file:\/\/|\.\.?\/)/i.test(s)) return true;
  // A path needs a map-like extension when it could be read as an entry: `10.0.0.0/8` is a
  // network and, in a regexp rule, `/spam\s+here/i` a pattern, not files.
  const path = /^\/?[\w.-]+(?:\/[\w.-]+)*\.(?:map|txt|inc|list|conf)$/.test(s);
  if (s.startsWith('/') && !regexpRule) return !/\s/.test(s);
  return path;
}

/** The map definition of a rule: its sources, or its inline entries. */
export function mapDefinition(rule: MultimapRule, name: string): MapDefinition | undefined {
  const spec = rule.map ?? rule.url;
  const urls: string[] = [];
  const data: string[] = [...(rule.data ?? [])];
  if (typeof spec === 'string') urls.push(spec);
  else if (spec !== undefined) {
    if (spec.length > 0 && isSource(spec[0]!, rule.regexp)) urls.push(...spec);
    else data.push(...spec);
  }
  if (urls.length === 0 && data.length === 0) return undefined;
  const def: MapDefinition = { url: urls.length > 0 ? urls : 'static', kind: mapKind(rule), description: rule.description ?? `multimap ${name}` };
  if (data.length > 0) def.data = data;
  if (rule.poll_interval !== undefined) def.pollInterval = rule.poll_interval;
  return def;
}

interface CompiledRule {
  name: string;
  symbol: string;
  rule: MultimapRule;
  map: MapHandle;
  allowed: Set<string>;
  selector?: CompiledSelector;
}

function lookup(c: CompiledRule, key: string): string[] {
  if (c.map.kind === 'regexp_multi' || c.map.kind === 'glob_multi') return c.map.getAll(key);
  const v = c.map.get(key);
  return v === undefined ? [] : [v];
}

function runRule(task: Task, c: CompiledRule): void {
  if (c.rule.skip_authenticated && task.meta.user) return;
  if (c.rule.skip_local && isLocalAddress(task.meta.ip)) return;
  let matched = false;
  const found = c.selector ? selectorCandidates(task, c.selector, c.rule.delimiter) : candidates(task, c.rule);
  for (const cand of found) {
    for (const key of cand.keys) {
      const values = lookup(c, key);
      if (values.length === 0) continue;
      for (const v of values) {
        // A content match would make a useless (and huge) option: only the map value is shown.
        const shown = c.rule.type === 'content' ? '' : key;
        const r = readValue(v, shown, c.symbol, c.allowed, !c.rule.disable_multisymbol);
        task.insert(r.symbol, r.weight, r.options);
      }
      matched = true;
      break;
    }
  }
  if (matched && c.rule.action) {
    task.setPreResult({ action: c.rule.action, message: c.rule.message ?? `Matched map: ${c.symbol}`, module: 'multimap' });
  }
}

export const multimapModule = defineModule<MultimapConfig>({
  name: 'multimap',
  config: MultimapConfig,
  async setup(ctx) {
    const compiled: CompiledRule[] = [];
    // Symbol names are config values (`symbol:`, `symbols:`): a record without a prototype.
    const defs = dataRecord<SymbolDef>();
    for (const [name, rule] of Object.entries(ctx.config.rules)) {
      let selector: CompiledSelector | undefined;
      if (rule.type === 'selector') {
        if (!rule.selector) {
          ctx.log.error('multimap: a selector rule needs `selector`; rule skipped', { rule: name });
          continue;
        }
        try {
          selector = ctx.selector(rule.selector);
        } catch (e) {
          // A bad selector is a config error (configtest lists it); the other rules still load.
          ctx.log.error('multimap: invalid selector; rule skipped', { rule: name, selector: rule.selector, error: (e as Error).message });
          continue;
        }
      }
      const def = mapDefinition(rule, name);
      if (!def) {
        ctx.log.warn('multimap: rule has no map; skipped', { rule: name });
        continue;
      }
      let map: MapHandle;
      try {
        map = await ctx.maps.add(def);
      } catch (e) {
        ctx.log.error('multimap: cannot load the map of a rule; rule skipped', { rule: name, error: (e as Error).message });
        continue;
      }
      const symbol = rule.symbol ?? name;
      const d: SymbolDef = { score: rule.score, group: rule.group, description: rule.description ?? `multimap rule ${name}` };
      defs[symbol] = d;
      for (const s of rule.symbols) defs[s] ??= { score: rule.score, group: rule.group, description: `multimap rule ${name}` };
      compiled.push({ name, symbol, rule, map, allowed: new Set([symbol, ...rule.symbols]), ...(selector ? { selector } : {}) });
    }
    // Symbols come from the configured rules, not from a fixed table.
    for (const [symbol, d] of Object.entries(defs)) ctx.declareSymbol(symbol, d);
    if (compiled.length === 0) {
      ctx.disable('config');
      return;
    }
    const callbackNames = new Set<string>();
    for (const c of compiled) {
      const forced = c.rule.action !== undefined || c.rule.prefilter;
      // Two rules may share a symbol; each still needs its own callback name.
      const cb = callbackNames.has(c.symbol) ? `MULTIMAP_${c.name}` : c.symbol;
      callbackNames.add(cb);
      ctx.symbol({
        name: cb,
        stage: forced ? 'prefilters' : 'filters',
        ...(forced ? { priority: 10, flags: ['ignore_passthrough' as const] } : {}),
        // A hostname rule reads the PTR name once_received may resolve (a prefilter runs before it).
        ...(!forced && c.rule.type === 'hostname' ? { deps: [{ name: 'ONCE_RECEIVED_CHECK', weak: true }] } : {}),
        inserts: [...c.allowed],
        check: (task) => runRule(task, c),
      });
    }
  },
});
