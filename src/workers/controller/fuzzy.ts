// Fuzzy learning endpoints (fuzzy.md §6, controller.md): /fuzzyadd and /fuzzydel hash the body
// as fuzzy_check would and send WRITE/DEL to every write server of each rule mapping the flag;
// /fuzzydelhash deletes given digests; /plugins/fuzzy/{hashes,storages} help the web UI.
// fuzzyStat() is the per-storage hash count for /stat and /metrics (`fuzzy_stat`).
import type { Request } from '../../http/types.js';
import { parseMessage } from '../../message/parse-message.js';
import { messageHashes, type FuzzyHash, type HashSkips } from '../../fuzzy/message-hashes.js';
import { learnHashes, storageCount } from '../../fuzzy/ops.js';
import { compileRules, flagForSymbol, type FuzzyRule } from '../../fuzzy/rule.js';
import { FuzzyCheckConfig } from '../../fuzzy/rule-config.js';
import { FUZZY_DEL, FUZZY_WRITE, type FuzzyCommandCode } from '../../fuzzy/wire.js';
import { ControllerError, jsonReply } from './json.js';
import { dataRecord, type Logger } from '../../plugin-api/index.js';
import { storeUnavailable } from './store-outage.js';
import type { ControllerContext, ControllerRoute } from './types.js';

const MODULE = 'fuzzy_check';
/** A digest on the wire: 64 bytes, 128 hex characters. */
const HASH_RE = /^[0-9a-f]{128}$/i;
const SKIPPED = 401;
/** A storage's reply value when its store failed (FUZZY_STORE_ERROR). */
const STORE_ERROR = 500;

/** The rules of the fuzzy_check module as configured, or the reason there are none. */
export function configuredFuzzyRules(ctx: ControllerContext): { rules: FuzzyRule[] } | { error: string } {
  if (ctx.config.engine.disabledModules.includes(MODULE)) return { error: 'Module disabled' };
  const parsed = FuzzyCheckConfig.safeParse(ctx.config.engine.modules[MODULE] ?? {});
  if (!parsed.success) return { error: 'Module disabled' };
  let rules: FuzzyRule[];
  try {
    rules = compileRules(parsed.data);
  } catch {
    return { error: 'Module disabled' };
  }
  return rules.length ? { rules } : { error: 'Module has no rules' };
}

/** `fuzzy_stat`: stored hash count per rule's storage (STAT over UDP); a silent storage is left out. */
export async function fuzzyStat(ctx: ControllerContext): Promise<Record<string, number>> {
  const r = configuredFuzzyRules(ctx);
  if (!('rules' in r)) return {};
  // Keyed by rule names from the config: records without a prototype (records.ts).
  const out = dataRecord<number>();
  await Promise.all(r.rules.map(async (rule) => {
    const n = await storageCount(rule);
    if (n !== undefined) out[rule.name] = n;
  }));
  return out;
}

function intHeader(req: Request, name: string): number | undefined {
  const v = req.headers.first(name)?.trim();
  if (v === undefined || !/^-?\d+$/.test(v)) return undefined;
  return Number(v);
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/**
 * The `Weight` header: default 1 when absent or empty (3.4 also ignores a non-numeric one). The
 * wire field is a signed 32-bit integer, and an out-of-range or non-integer weight used to wrap
 * silently (`4294967297` stored as 1, `2147483648` as a large negative weight that unlearns),
 * so such a weight, or one that is not a number at all, is refused before anything is sent.
 */
function requestWeight(req: Request): number {
  const v = req.headers.first('weight')?.trim();
  if (v === undefined || v === '') return 1;
  const n = /^[+-]?\d{1,12}$/.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < INT32_MIN || n > INT32_MAX) throw new ControllerError(400, `Invalid Weight header: expected an integer between ${INT32_MIN} and ${INT32_MAX}`);
  return n;
}

function requestFlag(req: Request, rules: readonly FuzzyRule[]): number {
  const flag = intHeader(req, 'flag');
  if (flag !== undefined) return flag;
  const sym = req.headers.first('symbol')?.trim();
  const f = sym ? flagForSymbol(rules, sym) : undefined;
  if (f === undefined) throw new ControllerError(404, 'Unknown or missing flag');
  return f;
}

async function send(log: Logger, rules: readonly FuzzyRule[], cmd: FuzzyCommandCode, perRule: Map<FuzzyRule, FuzzyHash[]>, flag: number, weight: number): Promise<string[]> {
  const sent: string[] = [];
  const outcomes = await Promise.all(rules.map(async (rule) => {
    const hashes = perRule.get(rule) ?? [];
    if (hashes.length === 0) return undefined;
    for (const h of hashes) sent.push(h.digest.toString('hex'));
    return learnHashes(rule, cmd, hashes, flag, weight);
  }));
  for (const [i, o] of outcomes.entries()) {
    if (!o) continue;
    const rule = rules[i]!;
    const code = o.errorCodes[0];
    // 500: the storage's own store is down or did not answer in time; nothing was stored for sure.
    if (code === STORE_ERROR) {
      const text = `the fuzzy storage of rule ${rule.name} could not reach its store (down or not answering in time); the change is not acknowledged`;
      throw storeUnavailable(log, 'fuzzy', new Error(text));
    }
    if (code !== undefined) throw new ControllerError(code, code === SKIPPED ? 'fuzzy hash is skipped' : 'process fuzzy error');
    if (o.ok === 0 && o.unreachable > 0) throw new ControllerError(500, 'IO timeout');
  }
  return [...new Set(sent)];
}

export function fuzzyRoutes(ctx: ControllerContext): ControllerRoute[] {
  const configured = configuredFuzzyRules(ctx);
  const rulesOrThrow = (): FuzzyRule[] => {
    if ('error' in configured) throw new ControllerError(500, configured.error);
    return configured.rules;
  };
  const writable = (rules: readonly FuzzyRule[], flag: number): FuzzyRule[] =>
    rules.filter((r) => !r.readOnly && r.writeServers.length > 0 && r.mappings.has(flag));

  const learn = (cmd: FuzzyCommandCode) => async (req: Request) => {
    if (req.body.length === 0) throw new ControllerError(400, 'Empty body is not permitted');
    const rules = rulesOrThrow();
    const flag = requestFlag(req, rules);
    const weight = requestWeight(req);
    const applicable = writable(rules, flag);
    if (applicable.length === 0) throw new ControllerError(404, `No fuzzy rules matched for flag ${flag}`);
    const msg = parseMessage(req.body);
    const skips: HashSkips = {
      images: req.headers.first('skip-images') !== undefined,
      attachments: req.headers.first('skip-attachments') !== undefined,
      text: req.headers.first('skip-text') !== undefined,
    };
    const perRule = new Map(applicable.map((r) => [r, messageHashes(msg, r, skips)] as const));
    if ([...perRule.values()].every((h) => h.length === 0)) throw new ControllerError(404, `No content to generate fuzzy for flag ${flag}`);
    const hashes = await send(ctx.log, applicable, cmd, perRule, flag, weight);
    return jsonReply({ success: true, hashes });
  };

  const delHash = async (req: Request) => {
    const rules = rulesOrThrow();
    const flag = requestFlag(req, rules);
    const given = req.headers.all('hash').flatMap((v) => v.split(',')).map((s) => s.trim());
    if (given.length === 0) throw new ControllerError(400, 'No hash defined');
    const applicable = writable(rules, flag);
    if (applicable.length === 0) throw new ControllerError(404, `No fuzzy rules matched for flag ${flag}`);
    const hashes: FuzzyHash[] = given.filter((h) => HASH_RE.test(h)).map((h) => ({ type: 'bin', digest: Buffer.from(h, 'hex'), partId: '', size: 0 }));
    const perRule = new Map(applicable.map((r) => [r, hashes] as const));
    return jsonReply({ success: true, hashes: await send(ctx.log, applicable, FUZZY_DEL, perRule, flag, 0) });
  };

  /** /plugins/fuzzy/hashes?rule=NAME|flag=N: the hashes the body would be learned under. */
  const showHashes = (req: Request) => {
    if (req.body.length === 0) throw new ControllerError(400, 'Empty body is not permitted');
    const rules = rulesOrThrow();
    const want = req.query.get('rule');
    const flagText = req.query.get('flag');
    const flag = flagText !== undefined && /^\d+$/.test(flagText) ? Number(flagText) : undefined;
    const chosen = rules.filter((r) => (want === undefined || r.name === want) && (flag === undefined || r.mappings.has(flag)));
    const msg = parseMessage(req.body);
    const out = dataRecord<string[]>();
    for (const r of chosen) out[r.name] = messageHashes(msg, r).map((h) => h.digest.toString('hex'));
    return jsonReply({ success: true, hashes: out });
  };

  const storages = () => {
    const rules = 'rules' in configured ? configured.rules : [];
    const out = dataRecord<unknown>();
    for (const r of rules) {
      out[r.name] = {
        read_servers: r.readServers.map((s) => `${s.host}:${s.port}`),
        write_servers: r.writeServers.map((s) => `${s.host}:${s.port}`),
        read_only: r.readOnly,
        encrypted: r.serverPublicKey !== undefined,
        flags: Object.fromEntries([...r.mappings].map(([f, m]) => [m.symbol, f])),
      };
    }
    return jsonReply({ success: true, storages: out });
  };

  return [
    { path: '/fuzzyadd', level: 'enable', message: true, handler: learn(FUZZY_WRITE) },
    { path: '/fuzzydel', level: 'enable', message: true, handler: learn(FUZZY_DEL) },
    { path: '/fuzzydelhash', level: 'enable', handler: delHash },
    { path: '/plugins/fuzzy/hashes', level: 'normal', message: true, handler: showHashes },
    { path: '/plugins/fuzzy/storages', level: 'normal', handler: storages },
  ];
}
