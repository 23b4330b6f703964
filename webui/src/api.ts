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
  const call = async <T>(endpoint: string, init: { method?: 'GET' | 'POST'; body?: unknown; query?: Record<string, string> } = {}): Promise<T> => {
    const headers: Record<string, string> = {};
    const pw = password();
    if (pw !== undefined) headers.Password = pw;
    let body: string | undefined;
    if (init.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(init.body);
    }
    const qs = init.query ? `?${new URLSearchParams(init.query).toString()}` : '';
    let r: Response;
    try {
      r = await fetch(`${endpoint}${qs}`, { method: init.method ?? 'GET', headers, ...(body !== undefined ? { body } : {}), cache: 'no-store' });
    } catch (err) {
      throw new ApiError(0, `cannot reach the controller: ${String((err as Error).message ?? err)}`, endpoint);
    }
    if (!r.ok) throw new ApiError(r.status, await errorText(r), endpoint);
    return (await r.json()) as T;
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
  };
}
