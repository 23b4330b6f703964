// The callback of one rule: pick the content, ask the cache, then the scanner, and turn the
// verdicts into symbols and, when the rule has an `action`, a forced action. A scanner that
// cannot be reached gives the rule's _FAIL symbol and the scan goes on to its verdict.
import type { KvStore, MapHandle, Task } from '../../plugin-api/index.js';
import type { OutageLog } from '../../module-helpers/outage-log.js';
import { symbolFor, type CompiledRule } from './rule.js';
import { scanContent } from './scan.js';
import { selectContent, type ScanContent } from './select-content.js';
import type { ScanVerdict } from './wire.js';

/** Cached verdicts: `OK`, or the names found joined by this (a vertical tab, as Rspamd's cache). */
const NAME_SEPARATOR = '\v';
const CLEAN = 'OK';

export interface CheckDeps {
  /** The key-value store for the verdict cache, when the rule keeps one. */
  kv?: KvStore;
  /** Virus names never reported. */
  whitelist?: MapHandle;
  /** One warning per period while the cache's store is down, and while scans fail. */
  cacheOutage: OutageLog;
  scanOutage: OutageLog;
}

async function cached(rule: CompiledRule, deps: CheckDeps, task: Task, item: ScanContent): Promise<ScanVerdict | undefined> {
  if (!deps.kv || rule.cachePrefix === undefined) return undefined;
  try {
    const v = await deps.kv.get(rule.cachePrefix + item.digest);
    if (v === undefined) return undefined;
    const text = v.toString('utf8');
    return text === CLEAN ? { kind: 'clean' } : { kind: 'found', names: text.split(NAME_SEPARATOR).filter(Boolean) };
  } catch (err) {
    deps.cacheOutage(task, { rule: rule.name, error: (err as Error).message });
    return undefined;
  }
}

async function remember(rule: CompiledRule, deps: CheckDeps, task: Task, item: ScanContent, verdict: ScanVerdict): Promise<void> {
  if (!deps.kv || rule.cachePrefix === undefined || verdict.kind === 'error') return;
  const value = verdict.kind === 'clean' ? CLEAN : verdict.names.join(NAME_SEPARATOR);
  try {
    await deps.kv.set(rule.cachePrefix + item.digest, value, rule.opts.cache_expire * 1000);
  } catch (err) {
    deps.cacheOutage(task, { rule: rule.name, error: (err as Error).message });
  }
}

async function verdictFor(rule: CompiledRule, deps: CheckDeps, task: Task, item: ScanContent): Promise<ScanVerdict> {
  const hit = await cached(rule, deps, task, item);
  if (hit) return hit;
  const verdict = await scanContent(task, rule, item);
  await remember(rule, deps, task, item, verdict);
  return verdict;
}

/** `${SCANNER}` and `${VIRUS}` filled in; anything else is left as written. */
export function fillMessage(template: string, scanner: string, viruses: string): string {
  return template.replace(/\$\{(SCANNER|VIRUS)\}/g, (_m, k: string) => (k === 'SCANNER' ? scanner : viruses));
}

export function makeCheck(rule: CompiledRule, deps: CheckDeps): (task: Task) => Promise<void> {
  return async (task) => {
    const sel = selectContent(task.message, task.raw, rule.opts);
    if (sel.tooLarge.length > 0) task.log.info('antivirus: content larger than max_size not scanned', { rule: rule.name, sizes: sel.tooLarge, max_size: rule.opts.max_size });
    if (sel.overCap > 0) task.log.info('antivirus: parts beyond the cap not scanned', { rule: rule.name, skipped: sel.overCap });
    if (sel.items.length === 0) return;
    const verdicts = await Promise.all(sel.items.map((item) => verdictFor(rule, deps, task, item)));
    const reported: string[] = [];
    verdicts.forEach((v, i) => {
      const item = sel.items[i]!;
      if (v.kind === 'error') {
        deps.scanOutage(task, { rule: rule.name, error: v.text });
        task.insert(rule.symbolFail, 1, v.text);
      } else if (v.kind === 'clean') {
        const extra = { rule: rule.name, ...(item.filename !== undefined ? { filename: item.filename } : {}) };
        if (rule.opts.log_clean) task.log.info('antivirus: clean', extra);
        else task.log.debug('antivirus: clean', extra);
      } else {
        for (const name of v.names) {
          if (deps.whitelist?.has(name)) {
            task.log.info('antivirus: virus name is whitelisted', { rule: rule.name, virus: name });
            continue;
          }
          task.log.info('antivirus: virus found', { rule: rule.name, virus: name, ...(item.filename !== undefined ? { filename: item.filename } : {}) });
          task.insert(symbolFor(rule, name), 1, name);
          reported.push(name);
        }
      }
    });
    const action = rule.opts.action;
    if (action !== undefined && reported.length > 0) {
      // As Rspamd: reject decides at once; any other action is a floor the score may still raise.
      task.setPreResult({ action, message: fillMessage(rule.opts.message, rule.name, [...new Set(reported)].join('; ')), module: rule.name, least: action !== 'reject' });
    }
  };
}
