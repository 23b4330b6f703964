// The fuzzy_check module's controller endpoints, plugin `fuzzy`:
// /fuzzyadd and /fuzzydel hash the body as the check does and send WRITE/DEL to every write
// server of each rule mapping the flag; /fuzzydelhash deletes given digests;
// /plugins/fuzzy/{hashes,storages} help the web UI. They are registered whatever the rules
// are, so a module without rules still answers, with the reason it cannot serve.

import type { EndpointConn, EndpointDef, EndpointTask, ModuleContext } from '../../plugin-api/index.js';
import { dataRecord, StoreError } from '../../plugin-api/index.js';
import { messageHashes, type FuzzyHash, type HashSkips } from '../../rule-libs/fuzzy/message-hashes.js';
import { learnHashes } from '../../rule-libs/fuzzy/ops.js';
import { flagForSymbol, type FuzzyRule } from '../../rule-libs/fuzzy/rule.js';
import { FUZZY_DEL, FUZZY_WRITE, type FuzzyCommandCode } from '../../rule-libs/fuzzy/wire.js';
import type { FuzzyCheckConfig } from './config.js';

/** A digest on the wire: 64 bytes, 128 hex characters. */
const HASH_RE = /^[0-9a-f]{128}$/i;
/** Hashes named in one /fuzzydelhash request; each is a datagram to every write server. */
const MAX_DELHASH_HASHES = 1000;
const SKIPPED = 401;
/** A storage's reply value when its store failed (FUZZY_STORE_ERROR). */
const STORE_ERROR = 500;
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** The rules the endpoints work with, or why there are none ("Module disabled", "Module has no rules"). */
export type FuzzyRulesOutcome = { rules: FuzzyRule[] } | { error: string };

/** A refusal: answered as ERR(status, message) by the handler wrapper. */
class Refusal {
  constructor(readonly status: number, readonly message: string) {}
}

function intHeader(task: EndpointTask, name: string): number | undefined {
  const v = task.getRequestHeader(name)?.trim();
  if (v === undefined || !/^-?\d+$/.test(v)) return undefined;
  return Number(v);
}

/**
 * The `Weight` header: default 1 when absent or empty. The wire field is a signed 32-bit integer,
 * and an out-of-range weight used to wrap silently (one that unlearns), so it is refused before
 * anything is sent.
 */
function requestWeight(task: EndpointTask): number {
  const v = task.getRequestHeader('weight')?.trim();
  if (v === undefined || v === '') return 1;
  const n = /^[+-]?\d{1,12}$/.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < INT32_MIN || n > INT32_MAX) throw new Refusal(400, `Invalid Weight header: expected an integer between ${INT32_MIN} and ${INT32_MAX}`);
  return n;
}

function requestFlag(task: EndpointTask, rules: readonly FuzzyRule[]): number {
  const flag = intHeader(task, 'flag');
  if (flag !== undefined) return flag;
  const sym = task.getRequestHeader('symbol')?.trim();
  const f = sym ? flagForSymbol(rules, sym) : undefined;
  if (f === undefined) throw new Refusal(404, 'Unknown or missing flag');
  return f;
}

async function send(rules: readonly FuzzyRule[], cmd: FuzzyCommandCode, perRule: Map<FuzzyRule, FuzzyHash[]>, flag: number, weight: number): Promise<string[]> {
  const sent: string[] = [];
  const outcomes = await Promise.all(rules.map(async (rule) => {
    const hashes = perRule.get(rule) ?? [];
    if (hashes.length === 0) return undefined;
    for (const h of hashes) sent.push(h.digest.toString('hex'));
    return learnHashes(rule, cmd, hashes, flag, weight);
  }));
  for (const [i, o] of outcomes.entries()) {
    if (!o) continue;
    const code = o.errorCodes[0];
    // 500: the storage's own store is down or did not answer in time; nothing was stored for sure.
    // A StoreError, not a Refusal: the controller answers 503 naming the fuzzy store and logs the
    // outage once per period (store-outage.ts), however often a client retries.
    if (code === STORE_ERROR) {
      const text = `the fuzzy storage of rule ${rules[i]!.name} could not reach its store (down or not answering in time); the change is not acknowledged`;
      throw Object.assign(new StoreError('STORE_UNAVAILABLE', text), { store: 'fuzzy' });
    }
    if (code !== undefined) throw new Refusal(code, code === SKIPPED ? 'fuzzy hash is skipped' : 'process fuzzy error');
    if (o.ok === 0 && o.unreachable > 0) throw new Refusal(500, 'IO timeout');
  }
  return [...new Set(sent)];
}

/** A handler whose Refusals become send_error; anything else is the controller's 500. */
function refusing(enable: boolean, needTask: boolean, run: (task: EndpointTask, conn: EndpointConn, params: Record<string, string>) => Promise<unknown> | unknown): EndpointDef {
  return {
    enable,
    need_task: needTask,
    async handler(task, conn, params) {
      try {
        conn.send_ucl(await run(task, conn, params));
      } catch (err) {
        if (!(err instanceof Refusal)) throw err;
        conn.send_error(err.status, err.message);
      }
    },
  };
}

export function registerFuzzyEndpoints(ctx: ModuleContext<FuzzyCheckConfig>, outcome: FuzzyRulesOutcome): void {
  const rulesOrRefuse = (): FuzzyRule[] => {
    if ('error' in outcome) throw new Refusal(500, outcome.error);
    return outcome.rules;
  };
  const writable = (rules: readonly FuzzyRule[], flag: number): FuzzyRule[] =>
    rules.filter((r) => !r.readOnly && r.writeServers.length > 0 && r.mappings.has(flag));

  const learn = (cmd: FuzzyCommandCode) => async (task: EndpointTask) => {
    const rules = rulesOrRefuse();
    const flag = requestFlag(task, rules);
    const weight = requestWeight(task);
    const applicable = writable(rules, flag);
    if (applicable.length === 0) throw new Refusal(404, `No fuzzy rules matched for flag ${flag}`);
    const msg = task.message();
    const skips: HashSkips = {
      images: task.getRequestHeader('skip-images') !== undefined,
      attachments: task.getRequestHeader('skip-attachments') !== undefined,
      text: task.getRequestHeader('skip-text') !== undefined,
    };
    const perRule = new Map(applicable.map((r) => [r, messageHashes(msg, r, skips)] as const));
    if ([...perRule.values()].every((h) => h.length === 0)) throw new Refusal(404, `No content to generate fuzzy for flag ${flag}`);
    return { success: true, hashes: await send(applicable, cmd, perRule, flag, weight) };
  };

  const delHash = async (task: EndpointTask) => {
    const rules = rulesOrRefuse();
    const flag = requestFlag(task, rules);
    const given = task.getRequestHeaders('hash').flatMap((v) => v.split(',')).map((s) => s.trim()).slice(0, MAX_DELHASH_HASHES);
    if (given.length === 0) throw new Refusal(400, 'No hash defined');
    const applicable = writable(rules, flag);
    if (applicable.length === 0) throw new Refusal(404, `No fuzzy rules matched for flag ${flag}`);
    const hashes: FuzzyHash[] = given.filter((h) => HASH_RE.test(h)).map((h) => ({ type: 'bin', digest: Buffer.from(h, 'hex'), partId: '', size: 0 }));
    const perRule = new Map(applicable.map((r) => [r, hashes] as const));
    return { success: true, hashes: await send(applicable, FUZZY_DEL, perRule, flag, 0) };
  };

  /** /plugins/fuzzy/hashes?rule=NAME|flag=N: the hashes the body would be learned under. */
  const showHashes = (task: EndpointTask, _conn: EndpointConn, params: Record<string, string>) => {
    const rules = rulesOrRefuse();
    const want = params.rule;
    const flag = params.flag !== undefined && /^\d+$/.test(params.flag) ? Number(params.flag) : undefined;
    const chosen = rules.filter((r) => (want === undefined || r.name === want) && (flag === undefined || r.mappings.has(flag)));
    const msg = task.message();
    const out = dataRecord<string[]>();
    for (const r of chosen) out[r.name] = messageHashes(msg, r).map((h) => h.digest.toString('hex'));
    return { success: true, hashes: out };
  };

  const storages = () => {
    const rules = 'rules' in outcome ? outcome.rules : [];
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
    return { success: true, storages: out };
  };

  ctx.endpoint('fuzzy', '/fuzzyadd', refusing(true, true, learn(FUZZY_WRITE)));
  ctx.endpoint('fuzzy', '/fuzzydel', refusing(true, true, learn(FUZZY_DEL)));
  ctx.endpoint('fuzzy', '/fuzzydelhash', refusing(true, false, delHash));
  ctx.endpoint('fuzzy', 'hashes', refusing(false, true, showHashes));
  ctx.endpoint('fuzzy', 'storages', refusing(false, false, storages));
}
