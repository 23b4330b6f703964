// The public plugin API. Built-in modules (src/modules/*) and users' plugins see only this file
// and what it re-exports; the engine (src/engine/) implements the interfaces declared here.

import type { ZodType } from 'zod';
import type { Message, ReceivedHop, EmailAddress } from '../message/types.js';
import type { MilterReply, ScanMeta, SymbolResult } from '../core/scan-types.js';
import type { TaskDns, TaskHttp, TaskRedis, TaskTcp, TaskUdp } from '../net/types.js';
import type { Stores } from '../storage/types.js';
import type { MapDefinition, MapHandle } from '../maps/types.js';
import type { EndpointDef, Learner } from './endpoints.js';
import type { Logger } from '../core/logger.js';
import type { PreResult, Verdict } from '../core/verdict.js';
import type { CompiledSelector } from '../selectors/index.js';

export * from '../core/scan-types.js';
export type { Logger } from '../core/logger.js';
export type { PreResult, Verdict } from '../core/verdict.js';
export { DEADLINE_PASSED, withDeadline } from '../core/deadline.js';
export { dataRecord, ownValue, setOwn } from '../core/records.js';
export { normaliseActionName } from '../core/action-names.js';
export * from './endpoints.js';
export type * from '../message/types.js';
export type * from '../net/types.js';
export type * from '../storage/types.js';
/** Thrown by an endpoint whose store is down: the controller answers 503 naming the store. */
export { StoreError } from '../storage/types.js';
export type { MapDefinition, MapHandle, MapKind } from '../maps/types.js';
export type { CompiledSelector, SelectorResult, SelectorTask } from '../selectors/index.js';
export { isSelectorError, setPoolVar } from '../selectors/index.js';

/** Stages in the order they run. */
export const STAGES = ['connfilter', 'prefilters', 'filters', 'postfilters', 'idempotent'] as const;
export type Stage = (typeof STAGES)[number];

/**
 * Registration flags. `coro`: the callback awaits network calls.
 * `explicit_disable`: keeps running under `symbols_enabled` unless named in `symbols_disabled`.
 * `ignore_passthrough`: runs even after a pre-result decided the action.
 * `empty`: runs even for an empty message. `skip_process`-safe symbols carry `no_mime`.
 */
export type SymbolFlag =
  | 'coro'
  | 'explicit_disable'
  | 'ignore_passthrough'
  | 'empty'
  | 'nostat'
  | 'no_mime'
  | 'fine'
  | 'ghost';

/** A symbol's static definition: its score, group and description, as in conf/ scores. */
export interface SymbolDef {
  score?: number;
  group?: string;
  description?: string;
  /** Count each insertion once (default) or allow several options to accumulate. */
  oneShot?: boolean;
}

export interface Dependency {
  name: string;
  /** A weak dependency only orders; a hard one also skips this symbol when the dependency is disabled. */
  weak?: boolean;
}

export interface SymbolRegistration {
  /** Name of the callback symbol. It may also be a result symbol itself (listed in `symbols`). */
  name: string;
  stage?: Stage;
  /** Higher runs first inside a stage. */
  priority?: number;
  deps?: Array<string | Dependency>;
  /** Result symbols this callback may insert (virtual children). */
  inserts?: string[];
  flags?: SymbolFlag[];
  /** Time budget for this callback in seconds (network checks); capped by the task deadline. */
  timeout?: number;
  check(task: Task): void | Promise<void>;
}

export interface CompositeDef {
  name: string;
  expression: string;
  score?: number;
  group?: string;
  description?: string;
  /** What happens to the atoms' scores when the composite matches. */
  policy?: 'default' | 'remove_all' | 'remove_symbol' | 'remove_weight' | 'leave';
}

/** One message being scanned, as modules see it. Facts are computed lazily and cached. */
export interface Task {
  readonly meta: ScanMeta;
  /** The message bytes as received (after decompression). */
  readonly raw: Buffer;
  /** Parsed MIME message; parsing happens on first access. */
  readonly message: Message;
  /** Received chain, top-most first. */
  readonly received: readonly ReceivedHop[];
  /** Envelope sender parsed, or undefined; `null sender` has address ''. */
  readonly envelopeFrom?: EmailAddress;
  readonly envelopeRcpt: readonly EmailAddress[];
  /** Task flags set so far (protocol flags plus ones set by rules, e.g. `message_rewrite`, `broken_headers`). */
  readonly flags: ReadonlySet<string>;
  readonly log: Logger;
  /** Aborted when the task deadline passes or the task ends; pass it to network calls. */
  readonly signal: AbortSignal;

  insert(symbol: string, weight?: number, options?: string | string[]): void;
  hasSymbol(name: string): boolean;
  getSymbol(name: string): SymbolResult | undefined;
  setFlag(flag: string): void;
  /**
   * The client's host name for the rest of the scan (`meta.hostname`; Rspamd's
   * task:set_hostname). once_received sets the PTR name it resolved when the MTA passed none;
   * a rule that reads the name after it declares a weak dependency on ONCE_RECEIVED_CHECK.
   */
  setHostname(name: string): void;
  /**
   * Force the action (Rspamd's task:set_pre_result), from any stage. A non-`least` pre-result
   * decides the action whatever the score and skips the symbols that have not run yet (but
   * `ignore_passthrough` ones), unless it has `processAll`; a `least` one only raises the floor
   * (the score may still choose a stronger action). Among several, the highest `priority` wins,
   * then the first set. An action disabled for the task by settings is refused (logged). See
   * docs/plugins.md, "Forcing an action".
   */
  setPreResult(pre: PreResult): void;
  /**
   * The rewrite-subject template for this task (Rspamd's task:set_metric_subject): `%s` the
   * original subject, `%d` the score. Replaces the settings' and the configured template; used
   * when the action is `rewrite subject`.
   */
  setSubject(template: string): void;
  /** Merge into the milter reply. */
  addMilterHeader(name: string, value: string, order?: number): void;
  removeMilterHeader(name: string, order?: number): void;
  /**
   * Merge a raw patch into the reply's `milter` object (Rspamd's task:set_milter_reply):
   * `add_headers` entries accumulate, `add_rcpt`/`del_rcpt` append, `spam_header` objects merge,
   * other keys are replaced. Prefer the typed `task.milter` for envelope instructions.
   */
  setMilter(patch: MilterReply): void;
  /** Envelope and delivery instructions for a milter (the reply's `milter` object), typed. */
  readonly milter: TaskMilter;
  addMessage(category: string, text: string): void;
  /** Replace the message (headers + body); marks the task `message_rewrite`. */
  rewriteMessage(message: Buffer): void;
  /** A DKIM-Signature header value made for this message (reply field `dkim-signature`). */
  addDkimSignature(value: string): void;
  /** The verdict so far; final once the idempotent stage runs. */
  verdict(): Verdict;
  /** Per-task settings for a plugin (`settings.plugins[name]`), if any. */
  pluginSettings(name: string): Record<string, unknown> | undefined;
  getRequestHeader(name: string): string | undefined;
  /** Newline used to fold generated header values: bare LF with the milter flag, else the message's. */
  readonly foldNewline: '\r\n' | '\n';
  /** Per-task scratch space shared by symbols of one module (key by module name). */
  readonly cache: Map<string, unknown>;
  /**
   * Network calls (src/net/types.ts), bound to the task deadline and counted as
   * pending events of the calling symbol. The awaited forms need the symbol's `coro` flag.
   */
  readonly http: TaskHttp;
  readonly dns: TaskDns;
  readonly tcp: TaskTcp;
  readonly udp: TaskUdp;
  readonly redis: TaskRedis;
}

/**
 * The `milter` instructions of the reply, which the milter proxy (src/proxy/milter) carries out
 * towards the MTA and other Rspamd milter clients read too. Addresses are bare (`a@b`) or
 * bracketed (`<a@b>`); they are sent bracketed. A value that cannot be sent in a milter frame
 * (a NUL, CR or LF, or brackets inside) is refused with a log line. See docs/plugins.md.
 */
export interface TaskMilter {
  /** New envelope sender (SMFIR_CHGFROM); `''` or `<>` is the null sender. The last call wins. */
  changeFrom(address: string): void;
  /** Add an envelope recipient (SMFIR_ADDRCPT). */
  addRcpt(address: string): void;
  /** Remove an envelope recipient (SMFIR_DELRCPT), as the client gave it in RCPT TO. */
  delRcpt(address: string): void;
  /**
   * How a `reject` verdict is carried out (`reject` key): `quarantine` (SMFIR_QUARANTINE, the
   * MTA holds the message), `discard` (SMFIR_DISCARD, accepted and dropped) or `reject` (the
   * default SMTP 554). It changes nothing when the verdict is not `reject`.
   */
  rejectAs(how: 'quarantine' | 'discard' | 'reject'): void;
  /**
   * Quarantine this message: `rejectAs('quarantine')` plus a `reject` pre-result from `module`
   * (its `message`, when given, is the quarantine reason the proxy sends). `priority` as in
   * setPreResult.
   */
  quarantine(opts: { module: string; reason?: string; priority?: number }): void;
  /** Accept and silently drop this message: `rejectAs('discard')` plus a `reject` pre-result. */
  discard(opts: { module: string; reason?: string; priority?: number }): void;
  /**
   * For an `add header` verdict: the value of the proxy's spam header (a string), or several
   * headers to set instead (`{ name: value }`, merged across calls).
   */
  spamHeader(value: string | Readonly<Record<string, string>>): void;
  /** Carry out no action: the MTA accepts the message with `X-Rspamd-Action: <action>` added. */
  noAction(): void;
}

/**
 * A symbol expression compiled once by ctx.expression: the composite language (`& | !`, `not`,
 * comparisons and arithmetic, `g:`/`g+:`/`g-:` group atoms, `SYM[opt]` option filters).
 */
export interface SymbolExpression {
  readonly text: string;
  /** Distinct atoms: symbol names, group atoms as `g:name` (for dependencies). */
  readonly atoms: readonly string[];
  /**
   * The value over the task's results so far, as Rspamd's expressions give it: a present atom is
   * |score| (at least 0.001), an absent one 0; `&`/`|` fold to 1/0 after their first operand;
   * `!` and comparisons give 1/0. Composites are symbols once the composites pass inserted them.
   */
  evaluate(task: Task): number;
}

/** What a module's setup() gets: its config, and the ways to register what it provides. */
export interface ModuleContext<C> {
  readonly config: C;
  readonly log: Logger;
  /** Host name of this server (for X-Rspamd-Server, Authentication-Results). */
  readonly hostname: string;
  symbol(reg: SymbolRegistration): void;
  composite(def: CompositeDef): void;
  /**
   * Declare a symbol whose name, score or group comes from the module's configuration (multimap
   * rules, RBL lists), beside the fixed `symbols` table of the definition. Same precedence: a
   * `symbols:` score in config still wins.
   */
  declareSymbol(name: string, def: SymbolDef): void;
  /** Switch the module off with a reason (config, redis, failed); the server still starts. */
  disable(reason: string): void;
  /** The worker's stores (Bayes, fuzzy, history, key-value); absent when the engine runs without them. */
  readonly stores?: Stores;
  /**
   * The same stores without the scan view's short time-out (`stores.redis.scan_timeout`), for
   * work a client waits on and must not lose to a slow moment: learning from an endpoint.
   */
  readonly learnStores?: Stores;
  /** Maps: declare one in setup, look keys up in callbacks; reloaded in the background. */
  readonly maps: ModuleMaps;
  /**
   * Every symbol the engine knows, sorted by name. Complete only once every module is set up,
   * so it throws during setup: call it from a callback (neural builds its input profile from it).
   */
  symbolTable(): readonly SymbolTableEntry[];
  /**
   * A controller endpoint this module serves: `path` is a name,
   * served at `/plugins/{plugin}/{path}`, or an absolute path (`/learnspam`). A local plugin
   * registering endpoints under the same `plugin` name replaces all of this plugin's endpoints.
   * Endpoints stay registered when the module disables itself (they can say why they refuse).
   */
  endpoint(plugin: string, path: string, def: EndpointDef): void;
  /** A classifier that learns messages handed to endpoints (`task.learn`). */
  learner(learner: Learner): void;
  /**
   * Compiles a selector once, in setup; run it in callbacks with
   * `.combine(task)`, `.flatten(task)` or `.results(task)`. A bad selector throws a coded
   * error (`ERR_SELECTOR_*`): left uncaught it fails the module's setup, which configtest reports.
   * `maps` names the maps `filter_map`, `except_map` and `apply_map` may use.
   */
  selector(text: string, opts?: { maps?: Readonly<Record<string, MapHandle>> }): CompiledSelector;
  /**
   * Compiles a symbol expression once, in setup; evaluate it in callbacks. A bad expression
   * throws a coded error (`ENGINE_BAD_EXPRESSION`) naming it, which fails the module's setup.
   */
  expression(text: string): SymbolExpression;
}

/** One symbol as the sealed registry knows it (ModuleContext.symbolTable). */
export interface SymbolTableEntry {
  name: string;
  /** Configured weight (0 when nothing gives one). */
  score: number;
  group: string;
  composite: boolean;
  /** Disabled in config, by its module, or with every callback that inserts it. */
  disabled: boolean;
  /** Union of the flags of the callbacks that may insert it (empty for a symbol no callback declares). */
  flags: readonly SymbolFlag[];
  /** Stages of those callbacks. */
  stages: readonly Stage[];
}

export interface ModuleMaps {
  add(def: MapDefinition): Promise<MapHandle>;
}

export interface ModuleDefinition<C = Record<string, never>> {
  name: string;
  /** Schema with defaults; the module's local.d/override.d config is validated by it. */
  config?: ZodType<C>;
  /** Every symbol the module can insert, with default score, group and description. */
  symbols?: Record<string, SymbolDef>;
  setup(ctx: ModuleContext<C>): void | Promise<void>;
}

/** Declare a module. Identity function: it exists for type inference and as the one spelling. */
export function defineModule<C>(def: ModuleDefinition<C>): ModuleDefinition<C> {
  return def;
}
