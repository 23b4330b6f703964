// The one module that talks to the controller. Every endpoint the UI uses is a typed method
// here; pages never build URLs or call fetch themselves. URLs are relative (no leading slash),
// so the UI works behind a reverse proxy that serves it on a sub-path.

/** The controller's action names, in /stat order. */
export const ACTIONS = ['reject', 'soft reject', 'rewrite subject', 'add header', 'greylist', 'no action'] as const;
export type ActionName = (typeof ACTIONS)[number];
/** The thresholds /saveactions sets, in its array order. */
export const SAVED_ACTIONS = ['reject', 'rewrite subject', 'add header', 'greylist'] as const;
export type SavedAction = (typeof SAVED_ACTIONS)[number];

export interface AuthInfo {
  version: string;
  auth: 'ok';
  uptime: number;
  scanned: number;
  learned: number;
  read_only: boolean;
  config_id: string;
  /** Present when the controller needs no password. */
  warning?: string;
}

export interface Statfile {
  symbol: string;
  revision: number;
  used: number;
  total: number;
  users: number;
}

export interface Stat {
  version: string;
  uptime: number;
  read_only: boolean;
  scanned: number;
  learned: number;
  actions: Record<string, number>;
  scan_times: Array<number | null>;
  spam_count: number;
  ham_count: number;
  connections: number;
  control_connections: number;
  bytes_allocated: number;
  total_learns: number;
  statfiles?: Statfile[];
  fuzzy_hashes?: Record<string, number>;
}

export interface WorkerHealth {
  role: string;
  pid?: number;
  state: 'up' | 'starting' | 'restarting' | 'silent';
  restarts: number;
  startedAt?: number;
  inFlight?: number;
  heapUsed?: number;
  /** Scans this worker process finished since it started, and their actions. */
  scanned?: number;
  actions?: Record<string, number>;
}

export interface StoreHealth {
  store: string;
  backend: string;
  ok: boolean;
  error?: string;
  ms: number;
}

export interface HealthDetails {
  version: string;
  uptime: number;
  scanners: number;
  alive: number;
  down: string[];
  workers: WorkerHealth[];
  stores: StoreHealth[];
  heap_used: number;
  rss: number;
}

/** The server's archives; `hour` is the last hour of `day` (cut by the UI). */
export type GraphType = 'day' | 'week' | 'month' | 'year';
export interface GraphPoint {
  x: number;
  y: number | null;
}

export interface PieSlice {
  label: string;
  color: string;
  value: number;
}

export interface ErrorEntry {
  ts: number;
  pid: number;
  type: string;
  id: string;
  module: string;
  message: string;
}

export interface HistorySymbol {
  name?: string;
  score: number;
  metric_score: number;
  description?: string;
  options?: string[];
  group?: string;
}

/** What mailsift adds to a history row (src/observability/history-row.ts explainOf). */
export interface RowExplanation {
  thresholds?: Record<string, number>;
  forced?: string;
  capped_groups?: string[];
  composites?: Record<string, string[]>;
  settings?: { id?: string; actions?: Record<string, number | null>; scores?: string[]; whitelist?: boolean; symbols_limited?: boolean };
}

export interface HistoryRow {
  unix_time: number;
  'message-id'?: string;
  score: number;
  required_score: number;
  action: string;
  is_skipped?: boolean;
  symbols: Record<string, HistorySymbol>;
  time_real: number;
  sender_smtp: string;
  sender_mime: string;
  rcpt_smtp: string[];
  rcpt_mime: string[];
  user: string;
  subject: string;
  size: number;
  ip: string;
  explain?: RowExplanation;
}

export interface ActionThreshold {
  action: string;
  value: number | null;
}

export interface SymbolInfo {
  symbol: string;
  weight: number;
  description?: string;
}

export interface SymbolGroup {
  group: string;
  rules: SymbolInfo[];
}

/** What /whatif takes: the bodies /saveactions and /savesymbols would be sent. */
export interface WhatifProposal {
  actions?: Array<number | null>;
  symbols?: Array<{ name: string; value: number }>;
}

export interface WhatifChange {
  index: number;
  unix_time: number;
  'message-id'?: string;
  subject?: string;
  sender?: string;
  score_before: number;
  score_after: number;
  action_before: string;
  action_after: string;
}

export interface WhatifAnswer {
  rows: number;
  changed: number;
  fixed: number;
  changes: WhatifChange[];
  moves: Record<string, number>;
}

/** /counters: one row per symbol (weight and time are averages per hit). */
export interface SymbolCounter {
  symbol: string;
  weight: number;
  frequency: number;
  hits: number;
  time: number;
}

/** /maps: the file maps the controller can show (`map` is the id /getmap and /savemap take). */
export interface MapInfo {
  map: number;
  description?: string;
  uri: string;
  editable: boolean;
}

/** /plugins/maps/query: each map that holds the value (and, with misses, each that does not). */
export interface MapQueryAnswer {
  success: boolean;
  results: Array<{ map: string; alias: string; key: string; value?: string; hit: boolean }>;
}

/** Envelope of a scan, sent as /checkv2's request headers; empty fields are left out. */
export interface ScanEnvelope {
  ip?: string;
  from?: string;
  rcpt?: string;
  helo?: string;
  hostname?: string;
  user?: string;
}

/** A message as the browser has it: pasted text or an uploaded file's bytes. */
export type MessageBody = string | ArrayBuffer;

/**
 * How a learn or fuzzy request ended. `done` false is a refusal: Rspamd answers learn refusals
 * with 204 or 208 and the reason in the status line (no body), others with an error status.
 */
export interface Outcome {
  done: boolean;
  status: number;
  reason: string;
  /** The digests /fuzzyadd and /fuzzydel sent. */
  hashes?: string[];
}

export interface FuzzyStorage {
  read_servers: string[];
  write_servers: string[];
  read_only: boolean;
  encrypted: boolean;
  /** Symbol → flag. */
  flags: Record<string, number>;
}

export interface SelectorCheck {
  success: boolean;
  error?: string;
}

export interface SelectorData {
  success: boolean;
  data?: unknown;
}

export interface NeuralRuleStatus {
  name: string;
  symbol_spam: string;
  symbol_ham: string;
  loaded_version: number;
  inputs?: number;
  hidden?: number;
  store_version: number;
  vectors?: { spam: number; ham: number };
  max_trains: number;
  training: boolean;
  error?: string;
}

export interface NeuralStatus {
  enabled: boolean;
  rules: NeuralRuleStatus[];
}

/** A refusal or failure of the controller, with its status and the server's own text. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly endpoint: string,
  ) {
    super(message);
  }
  /** The controller does not serve this endpoint (an older or differently built server). */
  get missing(): boolean {
    return this.status === 404;
  }
  get unauthorized(): boolean {
    return this.status === 401 || this.status === 403;
  }
}

export interface Api {
  /** Logs in: what the password (or none: trusted address, open controller) grants. */
  auth(): Promise<AuthInfo>;
  stat(): Promise<Stat>;
  health(): Promise<HealthDetails>;
  graph(type: GraphType): Promise<GraphPoint[][]>;
  pie(): Promise<PieSlice[]>;
  errors(): Promise<ErrorEntry[]>;
  history(): Promise<HistoryRow[]>;
  actions(): Promise<ActionThreshold[]>;
  symbols(): Promise<SymbolGroup[]>;
  whatif(p: WhatifProposal): Promise<WhatifAnswer>;
  /** `[reject, rewrite subject, add header, greylist]`, null switches one off. */
  saveActions(values: Array<number | null>): Promise<void>;
  saveSymbols(list: Array<{ name: string; value: number }>): Promise<void>;
  counters(): Promise<SymbolCounter[]>;
  maps(): Promise<MapInfo[]>;
  getMap(id: number): Promise<string>;
  saveMap(id: number, text: string): Promise<void>;
  /** Looks `value` up in every map the modules declared. */
  queryMaps(value: string): Promise<MapQueryAnswer>;
  /** Scans a message (POST /checkexplain) and answers its history row, explanation included. */
  scan(message: MessageBody, envelope?: ScanEnvelope): Promise<HistoryRow>;
  learn(cls: 'spam' | 'ham', message: MessageBody): Promise<Outcome>;
  fuzzy(op: 'add' | 'del', message: MessageBody, flag: number, weight?: number): Promise<Outcome>;
  fuzzyStorages(): Promise<Record<string, FuzzyStorage>>;
  checkSelector(selector: string): Promise<SelectorCheck>;
  checkMessage(selector: string, message: MessageBody): Promise<SelectorData>;
  neuralStatus(): Promise<NeuralStatus>;
}

interface CallInit {
  method?: 'GET' | 'POST';
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as it is (a message, a map's text). */
  raw?: string | ArrayBuffer;
  query?: Record<string, string>;
  headers?: Record<string, string>;
}

async function errorText(r: Response): Promise<string> {
  try {
    const body = (await r.json()) as { error?: unknown };
    if (typeof body.error === 'string') return body.error;
  } catch {
    // Not JSON (a plain 404 "Not found"): the status text says it.
  }
  return r.statusText || `HTTP ${r.status}`;
}

/** The client, sending `password()` (when set) with every request. */
export function createApi(password: () => string | undefined): Api {
  /** The response, or ApiError when the controller cannot be reached. `raw` is sent as it is (a message). */
  const send = async (endpoint: string, init: CallInit): Promise<Response> => {
    const headers: Record<string, string> = { ...init.headers };
    const pw = password();
    if (pw !== undefined) headers.Password = pw;
    let body: string | ArrayBuffer | undefined = init.raw;
    if (init.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(init.body);
    }
    const qs = init.query ? `?${new URLSearchParams(init.query).toString()}` : '';
    try {
      return await fetch(`${endpoint}${qs}`, { method: init.method ?? 'GET', headers, ...(body !== undefined ? { body } : {}), cache: 'no-store' });
    } catch (err) {
      throw new ApiError(0, `cannot reach the controller: ${String((err as Error).message ?? err)}`, endpoint);
    }
  };
  const call = async <T>(endpoint: string, init: CallInit = {}): Promise<T> => {
    const r = await send(endpoint, init);
    if (!r.ok) throw new ApiError(r.status, await errorText(r), endpoint);
    return (await r.json()) as T;
  };
  const text = async (endpoint: string, init: CallInit = {}): Promise<string> => {
    const r = await send(endpoint, init);
    if (!r.ok) throw new ApiError(r.status, await errorText(r), endpoint);
    return r.text();
  };
  /** Learn and fuzzy requests: a refusal is an answer to show, not a failure (404 only when the endpoint is missing). */
  const outcome = async (endpoint: string, init: CallInit): Promise<Outcome> => {
    const r = await send(endpoint, { ...init, method: 'POST' });
    if (r.status === 200) {
      const body = (await r.json().catch(() => ({}))) as { hashes?: string[] };
      return { done: true, status: 200, reason: 'OK', ...(body.hashes ? { hashes: body.hashes } : {}) };
    }
    const reason = r.status === 204 || r.status === 208 ? r.statusText || `HTTP ${r.status}` : await errorText(r);
    // A plain 404 "Not found" is the controller's missing route; an endpoint's own 404 carries its reason.
    if (r.status === 404 && reason === 'Not found') throw new ApiError(404, reason, endpoint);
    if (r.status === 401 || r.status === 403) throw new ApiError(r.status, reason, endpoint);
    return { done: false, status: r.status, reason };
  };
  const envelopeHeaders = (e: ScanEnvelope = {}): Record<string, string> => {
    const h: Record<string, string> = {};
    const names: Record<keyof ScanEnvelope, string> = { ip: 'IP', from: 'From', rcpt: 'Rcpt', helo: 'Helo', hostname: 'Hostname', user: 'User' };
    for (const [k, name] of Object.entries(names) as Array<[keyof ScanEnvelope, string]>) {
      const v = e[k]?.trim();
      if (v) h[name] = v;
    }
    return h;
  };
  const post = <T>(endpoint: string, body: unknown) => call<T>(endpoint, { method: 'POST', body });
  return {
    auth: () => call<AuthInfo>('auth'),
    stat: () => call<Stat>('stat'),
    health: () => call<HealthDetails>('health'),
    graph: (type) => call<GraphPoint[][]>('graph', { query: { type } }),
    pie: () => call<PieSlice[]>('pie'),
    errors: () => call<ErrorEntry[]>('errors'),
    history: async () => (await call<{ version: number; rows: HistoryRow[] }>('history')).rows,
    actions: () => call<ActionThreshold[]>('actions'),
    symbols: () => call<SymbolGroup[]>('symbols'),
    whatif: (p) => post<WhatifAnswer>('whatif', p),
    saveActions: async (values) => void (await post<unknown>('saveactions', values)),
    saveSymbols: async (list) => void (await post<unknown>('savesymbols', list)),
    counters: () => call<SymbolCounter[]>('counters'),
    maps: () => call<MapInfo[]>('maps'),
    getMap: (id) => text('getmap', { headers: { Map: String(id) } }),
    saveMap: async (id, body) => void (await call<unknown>('savemap', { method: 'POST', raw: body, headers: { Map: String(id) } })),
    queryMaps: (value) => call<MapQueryAnswer>('plugins/maps/query', { query: { value, report_misses: '1' } }),
    scan: (message, envelope) => call<HistoryRow>('checkexplain', { method: 'POST', raw: message, headers: envelopeHeaders(envelope) }),
    learn: (cls, message) => outcome(cls === 'spam' ? 'learnspam' : 'learnham', { raw: message }),
    fuzzy: (op, message, flag, weight) => outcome(op === 'add' ? 'fuzzyadd' : 'fuzzydel', { raw: message, headers: { Flag: String(flag), ...(weight !== undefined ? { Weight: String(weight) } : {}) } }),
    fuzzyStorages: async () => (await call<{ storages: Record<string, FuzzyStorage> }>('plugins/fuzzy/storages')).storages,
    checkSelector: (selector) => call<SelectorCheck>('plugins/selectors/check_selector', { query: { selector } }),
    checkMessage: (selector, message) => call<SelectorData>('plugins/selectors/check_message', { method: 'POST', raw: message, query: { selector } }),
    neuralStatus: () => call<NeuralStatus>('plugins/neural/status'),
  };
}
