// One message being scanned: the `Task` modules see. Facts (parsed message, Received chain,
// envelope) are computed on first use and cached; results go into the task's Scoring;
// milter instructions from several modules are merged as Rspamd merges them.

import { setMaxListeners } from 'node:events';
import type {
  EmailAddress,
  Logger,
  Message,
  MilterHeaderEntry,
  MilterReply,
  PreResult,
  ReceivedHop,
  ScanMeta,
  Stage,
  SymbolResult,
  Task,
  Verdict,
} from '../plugin-api/index.js';
import { parseMessage, makeRawMessage } from '../message/parse-message.js';
import { parseReceivedChain } from '../message/parse-received.js';
import { parseEnvelopeAddress } from '../message/addresses.js';
import { actionUsable, applyActionOverrides, normaliseActionName, requiredScore, selectAction } from './actions.js';
import type { ActionEntry, Selection } from './actions.js';
import { DEFAULT_PRE_RESULT_PRIORITY } from './actions.js';
import type { EngineCore } from './core.js';
import { Scoring } from './scoring.js';
import { symbolAllowed } from './settings.js';
import type { CompiledSettings } from './settings.js';
import { renderSubject, DEFAULT_SUBJECT_TEMPLATE } from './subject.js';
import { ownValue, setOwn } from '../core/records.js';
import { createTaskNet } from '../net/index.js';
import type { DnsBudget, TaskDns, TaskHttp, TaskNet, TaskRedis, TaskTcp, TaskUdp } from '../net/index.js';
import { TaskNetScope } from './net-scope.js';
import { TaskMilterInstructions } from './task-milter.js';
import type { ItemInfo } from './registry.js';

type AddHeaderValue = string | MilterHeaderEntry;

type AnyFn = (...args: unknown[]) => unknown;

export class ScanTask implements Task {
  /** Replaced (never changed in place) by setHostname: the request's object stays as it came. */
  meta: ScanMeta;
  readonly raw: Buffer;
  readonly log: Logger;
  readonly cache = new Map<string, unknown>();
  readonly scoring: Scoring;
  readonly settings: CompiledSettings;
  readonly actions: readonly ActionEntry[];
  readonly requiredScore: number;
  /**
   * Filters stop early above this score. It is the configured highest spam
   * threshold, not the per-request one: Rspamd 3.4 kept running rules past a lowered
   * threshold in every settings case recorded from it.
   */
  readonly spamLimit: number;
  readonly flagSet: Set<string>;
  readonly core: EngineCore;
  readonly empty: boolean;
  /** `skip` came with the request: nothing runs, nothing is parsed. */
  readonly requestSkip: boolean;
  readonly passAll: boolean;
  readonly profiling: boolean;
  readonly startedAt: number;
  readonly deadlineAt: number;
  stage: Stage | 'done' = 'connfilter';
  preResults: PreResult[] = [];
  /** A non-least pre-result exists: remaining symbols skip unless ignore_passthrough. */
  passthrough = false;
  timedOut = false;
  finished = false;
  /** The reply's `milter` object, built by setMilter (and Task.milter, settings). */
  milterReply: MilterReply | undefined;
  /** Set by a rule (setSubject): wins over the settings' and the configured template. */
  subjectTemplate: string | undefined;
  #milterApi: TaskMilterInstructions | undefined;
  /** Keyed by category, which Settings may name: written with setOwn (records.ts). */
  messages: Record<string, string> = {};
  rewritten: Buffer | undefined;
  dkimSignatures: string[] | undefined;
  profile: Record<string, number> | undefined;
  /**
   * Seconds each callback item ran, by item id; −1 for items that did not run. Always recorded
   * (the worker's per-symbol statistics use them; the reply shows them only with `profile`). An
   * array rather than a record keyed by name: a task runs hundreds of items, and a record grown
   * one name at a time was a good part of what each scan allocated.
   */
  readonly itemTimes: Float64Array;
  /** Item id → promise of an item still running. */
  pending: Map<number, Promise<void>> | null = null;
  finalVerdict: Verdict | undefined;
  #message: Message | undefined;
  #received: ReceivedHop[] | undefined;
  #envelopeFrom: EmailAddress | null | undefined;
  #envelopeRcpt: EmailAddress[] | undefined;
  #abort: AbortController | undefined;
  /** The symbol whose callback is running synchronously right now (network-call attribution). */
  runningItem: ItemInfo | undefined;
  /** Made on first network call: a task that never touches the network pays nothing. */
  netScope: TaskNetScope | undefined;
  #net: TaskNet | undefined;
  readonly #dnsBudget: DnsBudget = { used: 0 };

  /** Lookups made and failures seen by every view of this task's DNS API. */
  get dnsStats(): Readonly<DnsBudget> {
    return this.#dnsBudget;
  }

  /** Seconds of every item that ran, by item name (the `profile` flag's reply). */
  allItemTimes(): Record<string, number> {
    const out: Record<string, number> = {};
    const items = this.core.registry.items;
    for (let i = 0; i < items.length; i++) if (this.itemTimes[i]! >= 0) out[items[i]!.name] = this.itemTimes[i]!;
    return out;
  }

  /** Seconds of the items named like these symbols, for those that ran. */
  itemTimesOf(names: readonly string[]): Record<string, number> {
    const out: Record<string, number> = {};
    for (const n of names) {
      const item = this.core.registry.itemsByName.get(n);
      if (item && this.itemTimes[item.id]! >= 0) out[n] = this.itemTimes[item.id]!;
    }
    return out;
  }

  constructor(core: EngineCore, raw: Buffer, meta: ScanMeta, settings: CompiledSettings) {
    this.core = core;
    this.raw = raw;
    this.meta = meta;
    this.log = core.log;
    this.settings = settings;
    this.scoring = new Scoring(core.groupLimits);
    this.itemTimes = new Float64Array(core.registry.items.length).fill(-1);
    this.startedAt = performance.now();
    this.deadlineAt = this.startedAt + core.taskTimeoutMs;
    this.flagSet = new Set<string>(meta.flags);
    for (const f of settings.flags) this.flagSet.add(f);
    if (meta.brokenEnvelope) this.flagSet.add('broken_headers');
    if (settings.whitelist) this.flagSet.add('skip');
    this.requestSkip = meta.flags.has('skip');
    this.empty = raw.length === 0;
    this.passAll = meta.pass === 'all' || this.flagSet.has('pass_all');
    this.profiling = this.flagSet.has('profile');
    if (this.profiling) this.profile = {};
    if (settings.actions.length > 0) {
      this.actions = applyActionOverrides(core.baseActions, settings.actions, core.milterAttrs);
      this.requiredScore = requiredScore(this.actions);
    } else {
      this.actions = core.baseActions;
      this.requiredScore = core.baseRequiredScore;
    }
    this.spamLimit = core.baseSpamLimit;
    if (settings.messages) for (const [k, v] of Object.entries(settings.messages)) setOwn(this.messages, k, v);
    if (settings.addHeaders || settings.removeHeaders) {
      const patch: MilterReply = {};
      if (settings.addHeaders) patch.add_headers = settings.addHeaders;
      if (settings.removeHeaders) patch.remove_headers = settings.removeHeaders;
      this.setMilter(patch);
    }
    if (settings.milter) this.setMilter(settings.milter);
  }

  get milter(): TaskMilterInstructions {
    return (this.#milterApi ??= new TaskMilterInstructions(this));
  }

  get message(): Message {
    if (!this.#message) {
      this.#message = this.meta.raw ? makeRawMessage(this.raw, this.meta.contentType, this.meta.filename) : parseMessage(this.raw);
    }
    return this.#message;
  }

  /**
   * The Message-ID for a log line about this task, `undef` when there is none; never throws
   * (it is asked for while reporting a failure, which may be the parse's own).
   */
  messageIdForLog(): string {
    try {
      return this.message.messageId ?? 'undef';
    } catch {
      return 'undef';
    }
  }

  /** The message already parsed for this request (settings selector conditions), used instead of parsing again. */
  adoptMessage(message: Message): void {
    this.#message ??= message;
  }

  /** Whether the message was parsed (the reply carries a message-id only then). */
  get parsed(): boolean {
    return this.#message !== undefined;
  }

  get received(): readonly ReceivedHop[] {
    if (!this.#received) this.#received = parseReceivedChain(this.message.headers.get('received'));
    return this.#received;
  }

  get envelopeFrom(): EmailAddress | undefined {
    if (this.#envelopeFrom === undefined) {
      this.#envelopeFrom = this.meta.from === undefined ? null : parseEnvelopeAddress(this.meta.from) ?? null;
    }
    return this.#envelopeFrom ?? undefined;
  }

  get envelopeRcpt(): readonly EmailAddress[] {
    if (!this.#envelopeRcpt) {
      this.#envelopeRcpt = [];
      for (const r of this.meta.rcpt) {
        const a = parseEnvelopeAddress(r);
        if (a) this.#envelopeRcpt.push(a);
      }
    }
    return this.#envelopeRcpt;
  }

  get flags(): ReadonlySet<string> {
    return this.flagSet;
  }

  get signal(): AbortSignal {
    if (!this.#abort) {
      this.#abort = new AbortController();
      // Every pending network call of the task listens on it (an RBL pass alone makes dozens).
      setMaxListeners(0, this.#abort.signal);
    }
    return this.#abort.signal;
  }

  get #taskNet(): TaskNet {
    if (!this.#net) {
      this.netScope = new TaskNetScope(this);
      this.#net = createTaskNet(this.netScope, this.#dnsBudget);
    }
    return this.#net;
  }

  /**
   * The task as one callback that may await sees it: the same task (reads, writes and methods go
   * to it), except that its network API attributes every call to `item`, even after an await.
   * Its own TaskNet is made on first network use and shares the task's DNS lookup cap.
   */
  forItem(item: ItemInfo): ScanTask {
    let net: TaskNet | undefined;
    const itemNet = (): TaskNet => {
      if (!net) {
        void this.#taskNet; // makes the task's scope, whose pending counts the view shares
        net = createTaskNet(this.netScope!.forItem(item), this.#dnsBudget);
      }
      return net;
    };
    // Methods are bound to the task itself: called on the proxy they would miss its #private fields.
    const bound = new Map<PropertyKey, { fn: AnyFn; b: AnyFn }>();
    return new Proxy(this, {
      get(target, key) {
        switch (key) {
          case 'http': return itemNet().http;
          case 'dns': return itemNet().dns;
          case 'tcp': return itemNet().tcp;
          case 'udp': return itemNet().udp;
          case 'redis': return itemNet().redis;
        }
        const v: unknown = Reflect.get(target, key, target);
        if (typeof v !== 'function') return v;
        const hit = bound.get(key);
        if (hit && hit.fn === v) return hit.b;
        const b = (v as AnyFn).bind(target);
        bound.set(key, { fn: v as AnyFn, b });
        return b;
      },
      set(target, key, value) {
        return Reflect.set(target, key, value, target);
      },
    });
  }

  get http(): TaskHttp {
    return this.#taskNet.http;
  }

  get dns(): TaskDns {
    return this.#taskNet.dns;
  }

  get tcp(): TaskTcp {
    return this.#taskNet.tcp;
  }

  get udp(): TaskUdp {
    return this.#taskNet.udp;
  }

  get redis(): TaskRedis {
    return this.#taskNet.redis;
  }

  /** Abort network work of this task (deadline passed or the task ended). */
  abort(reason: string): void {
    if (!this.#abort || this.#abort.signal.aborted) return;
    // Every task ends this way; the reason's stack would only ever point here.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    const err = new Error(reason);
    Error.stackTraceLimit = limit;
    this.#abort.abort(err);
  }

  get skipped(): boolean {
    return this.flagSet.has('skip');
  }

  get foldNewline(): '\r\n' | '\n' {
    if (this.flagSet.has('milter')) return '\n';
    return this.newline;
  }

  /** Newline style of the message's header block, without forcing a full parse. */
  get newline(): '\r\n' | '\n' {
    if (this.#message) return this.#message.newline;
    const lf = this.raw.indexOf(10);
    return lf > 0 && this.raw[lf - 1] === 13 ? '\r\n' : lf < 0 ? '\r\n' : '\n';
  }

  symbolAllowed(name: string): boolean {
    const info = this.core.registry.symbols.get(name);
    if (info?.disabled) return false;
    return symbolAllowed(this.settings, name);
  }

  insert(symbol: string, weight = 1, options?: string | string[]): void {
    if (this.finished) return;
    if (this.stage === 'idempotent' && !this.skipped) {
      // Names the rule that tried (its module and symbol), not only the symbol it inserted.
      const by = this.runningItem;
      this.log.error('symbol insertion refused in the idempotent stage', { symbol, ...(by ? { module: by.module, by: by.name } : {}) });
      return;
    }
    if (!this.symbolAllowed(symbol)) return;
    const opts = options === undefined ? undefined : typeof options === 'string' ? [options] : options;
    this.scoring.insert(symbol, this.core.registry.symbols.get(symbol), weight, opts, this.settings.scores?.get(symbol), false);
  }

  /** Composites and settings insertions (single, bypassing the settings check for settings symbols). */
  insertSingle(symbol: string, weight: number, options?: string[]): void {
    this.scoring.insert(symbol, this.core.registry.symbols.get(symbol), weight, options, this.settings.scores?.get(symbol), true);
  }

  insertComposite(name: string): void {
    this.insertSingle(name, 1);
  }

  hasSymbol(name: string): boolean {
    const s = this.scoring.symbols.get(name);
    return s !== undefined && !s.ignored;
  }

  getSymbol(name: string): SymbolResult | undefined {
    const s = this.scoring.symbols.get(name);
    if (!s || s.ignored) return undefined;
    return toSymbolResult(s);
  }

  setFlag(flag: string): void {
    this.flagSet.add(flag);
  }

  setHostname(name: string): void {
    if (this.finished || !name) return;
    this.meta = { ...this.meta, hostname: name };
  }

  setPreResult(pre: PreResult): void {
    if (this.requestSkip || this.finished) return;
    const action = normaliseActionName(pre.action);
    if (!actionUsable(this.actions, action)) {
      this.log.warn('pre-result refused: action disabled for this task', { action, module: pre.module });
      return;
    }
    const entry: PreResult = { ...pre, action };
    // Stable sort by priority, highest first: insert after every pre-result of >= priority.
    const prio = entry.priority ?? DEFAULT_PRE_RESULT_PRIORITY;
    let at = this.preResults.length;
    while (at > 0 && (this.preResults[at - 1]!.priority ?? DEFAULT_PRE_RESULT_PRIORITY) < prio) at--;
    this.preResults.splice(at, 0, entry);
    if (!entry.least && !entry.processAll) this.passthrough = true;
  }

  setSubject(template: string): void {
    if (typeof template === 'string') this.subjectTemplate = template;
  }

  addMilterHeader(name: string, value: string, order?: number): void {
    this.setMilter({ add_headers: { [name]: { value, order: order ?? -1 } } });
  }

  removeMilterHeader(name: string, order = 0): void {
    this.setMilter({ remove_headers: { [name]: order } });
  }

  setMilter(patch: MilterReply): void {
    const m = (this.milterReply ??= {});
    for (const [key, val] of Object.entries(patch) as Array<[keyof MilterReply, unknown]>) {
      if (val === undefined) continue;
      if (key === 'add_headers') {
        // Header names come from Settings and plugins: own properties only, even `__proto__`
        // (records.ts); the record goes out in the reply and to plugins as an ordinary object.
        const target = (m.add_headers ??= {});
        for (const [name, v] of Object.entries(val as NonNullable<MilterReply['add_headers']>)) {
          const prev = ownValue(target, name);
          const added: AddHeaderValue[] = Array.isArray(v) ? v : [v];
          setOwn(target, name, prev === undefined ? (Array.isArray(v) ? [...v] : v) : [...(Array.isArray(prev) ? prev : [prev]), ...added]);
        }
      } else if (key === 'remove_headers') {
        const removals = { ...(m.remove_headers ?? {}) };
        for (const [name, order] of Object.entries(val as NonNullable<MilterReply['remove_headers']>)) setOwn(removals, name, order);
        m.remove_headers = removals;
      } else if (key === 'add_rcpt' || key === 'del_rcpt') {
        // Recipients from several rules (and settings) all apply: appended, each address once.
        const list = [...(m[key] ?? [])];
        for (const r of Array.isArray(val) ? val : [val]) if (typeof r === 'string' && !list.includes(r)) list.push(r);
        m[key] = list;
      } else if (key === 'spam_header' && typeof val === 'object' && val !== null && typeof m.spam_header === 'object') {
        const merged = { ...m.spam_header };
        for (const [name, v] of Object.entries(val as Record<string, string>)) setOwn(merged, name, v);
        m.spam_header = merged;
      } else {
        (m as Record<string, unknown>)[key] = val;
      }
    }
  }

  addMessage(category: string, text: string): void {
    setOwn(this.messages, category, text);
  }

  addDkimSignature(value: string): void {
    (this.dkimSignatures ??= []).push(value);
  }

  rewriteMessage(message: Buffer): void {
    this.rewritten = message;
    this.flagSet.add('message_rewrite');
  }

  /** Action selection on the current score and pre-results. */
  select(): Selection {
    return selectAction(this.actions, this.scoring.score, this.preResults);
  }

  verdict(): Verdict {
    if (this.finalVerdict) return this.finalVerdict;
    return this.buildVerdict();
  }

  buildVerdict(): Verdict {
    const sel = this.skipped && !this.passthrough ? { action: 'no action', score: 0 } : this.select();
    const v: Verdict = {
      score: sel.score,
      requiredScore: this.requiredScore,
      action: sel.action,
      symbols: this.symbolResults(),
    };
    const pre = 'passthrough' in sel ? sel.passthrough : undefined;
    if (pre) v.preResult = pre;
    if (sel.action === 'rewrite subject') v.subject = this.rewrittenSubject(sel.score);
    return v;
  }

  rewrittenSubject(score: number): string {
    const template = this.subjectTemplate ?? this.settings.subject ?? (this.core.subjectTemplate || DEFAULT_SUBJECT_TEMPLATE);
    // Raw input has no Subject header; Rspamd does not read the `Subject` request header either.
    const subject = this.meta.raw || this.empty ? '' : this.message.subject ?? '';
    return renderSubject(template, subject, score);
  }

  symbolResults(): SymbolResult[] {
    const out: SymbolResult[] = [];
    for (const s of this.scoring.symbols.values()) if (!s.ignored) out.push(toSymbolResult(s));
    return out;
  }

  pluginSettings(name: string): Record<string, unknown> | undefined {
    return this.settings.plugins?.[name];
  }

  getRequestHeader(name: string): string | undefined {
    return this.meta.requestHeaders.get(name.toLowerCase())?.[0];
  }
}

function toSymbolResult(s: { name: string; score: number; metricScore: number; options?: string[]; description?: string; groups: string[] }): SymbolResult {
  const r: SymbolResult = { name: s.name, score: s.score, metricScore: s.metricScore, groups: s.groups };
  if (s.options) r.options = [...s.options];
  if (s.description !== undefined) r.description = s.description;
  return r;
}
