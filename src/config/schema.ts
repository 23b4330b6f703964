// The shape of mailsift.yaml (and groups.yaml): strict, so a misspelt key is an error, with
// defaults so an empty directory still yields a complete configuration. Key spellings follow
// Rspamd where admins know them (`add_header`, `task_timeout`, `max_message`, `max_score`).

import { DEFAULT_METRIC_PREFIX } from '../observability/openmetrics.js';
import { z } from 'zod';
import { LOG_FORMAT_SETTINGS, LOG_LEVELS } from '../observability/log.js';
import { Bind, Duration, parsed, Size } from '../core/value-schemas.js';
import { StoresSection } from '../storage/config-schema.js';
import { WorkerTlsKeys } from './schema-tls.js';
import { WorkerCryptKeys } from '../crypto/keypair-schema.js';
import { FuzzyWorkerSchema } from '../fuzzy-storage/worker-config.js';
import { ProxyWorkerSchema } from '../proxy/config-schema.js';
import { LOOPBACK_NETWORKS, parseNetwork } from '../http/peer-networks.js';
import { DEFAULT_LEGACY_COMPAT, LEGACY_COMPAT_MODES } from '../protocol/legacy-command.js';
import { checkSelector } from '../selectors/index.js';
import { milterAddress } from '../engine/task-milter.js';

/** Caps what a config can ask for; each protects the machine from a typo like `count: 2000`. */
export const MAX_WORKER_COUNT = 256; // more processes than this only thrash a host
export const MAX_TASK_TIMEOUT_S = 3600; // a scan holding a connection for over an hour is a typo
export const DEFAULT_MAX_MESSAGE = 50 * 1024 * 1024; // Rspamd's default max_message
/** Longest allowed watchdog limit: a worker stalled for over an hour is a worker lost. */
export const MAX_WATCHDOG_TIMEOUT_S = 3600;
/** Smallest watchdog limit: the heartbeat comes every second and a loaded host delays it. */
export const MIN_WATCHDOG_TIMEOUT_S = 2;
/** Default heap cap of a worker process: room for several 50 MiB messages in flight, yet a runaway ends long before swap. */
export const DEFAULT_MAX_HEAP = 2 * 1024 ** 3;
/** Smallest heap cap accepted; below it V8 can hardly start (a worker that cannot start says so). */
export const MIN_MAX_HEAP = 16 * 1024 ** 2;


const Network = parsed((v) => (typeof v === 'string' && parseNetwork(v) ? v : undefined), 'an IP address or network like "127.0.0.0/8" or "::1"');
/** Peers allowed to name local files and shm segments as the message (File, Shm headers); [] refuses all. */
const FileInputPeers = z.array(Network).default([...LOOPBACK_NETWORKS]);

/**
 * spamc/RSPAMC text requests: `spamd` answers every spamc command and sets the spam flag from the
 * action; `rspamd` is Rspamd 3.4 to the byte (CHECK/SYMBOLS only, flag always False).
 */
export const LegacyCompat = z.enum(LEGACY_COMPAT_MODES).default(DEFAULT_LEGACY_COMPAT);

const MAX_DICT_ID = 0xffffffff; // zstd dictionary ids are 32-bit
/** A trained dictionary's path, or `{file, id}` where id must match the one stored in the file. */
const Dictionary = z
  .union([
    z.string().min(1),
    z.strictObject({
      file: z.string().min(1),
      id: z.int().min(1).max(MAX_DICT_ID).optional(),
    }),
  ])
  .transform((d) => (typeof d === 'string' ? { file: d } : d));

const NormalWorker = z.strictObject({
  bind: Bind.prefault('127.0.0.1:11333'),
  /** `auto` = one process per CPU core. */
  count: z.union([z.literal('auto'), z.int().min(1).max(MAX_WORKER_COUNT)]).default('auto'),
  max_message: Size.default(DEFAULT_MAX_MESSAGE),
  task_timeout: Duration.pipe(z.number().max(MAX_TASK_TIMEOUT_S)).default(8),
  /** Idle time before a kept-alive connection (client asked for keep-alive) is closed. */
  keepalive_timeout: Duration.pipe(z.number().min(0.1).max(MAX_TASK_TIMEOUT_S)).default(15),
  /** Dictionary for zstd request bodies; clients name it by id in the `Dictionary` header. */
  zstd_input_dictionary: Dictionary.optional(),
  /** Dictionary for zstd replies to clients that asked with the matching `Dictionary` id. */
  zstd_output_dictionary: Dictionary.optional(),
  file_input_peers: FileInputPeers,
  legacy_compat: LegacyCompat,
  // HTTP encryption (keypair, encrypted_only): see schema-keypair.ts.
  ...WorkerCryptKeys,
  // HTTPS listener (tls): see schema-tls.ts.
  ...WorkerTlsKeys,
});

/** Longest history a controller keeps; each row is a few KiB of JSON in the store. */
export const MAX_HISTORY_ROWS = 100_000;
/** Largest /errors ring; it lives in the supervisor's memory. */
export const MAX_ERROR_ELTS = 10_000;

const Neighbour = z.strictObject({ host: z.string().min(1), path: z.string().optional() });

// Controller options.
const ControllerWorker = z.strictObject({
  enabled: z.boolean().default(true),
  bind: Bind.prefault('127.0.0.1:11334'),
  /** Normal (read) password: plain text or a hash from `mailsift pw` / `rspamadm pw`. */
  password: z.string().min(1).optional(),
  /** Privileged (write) password: plain text or hashed. */
  enable_password: z.string().min(1).optional(),
  /** Addresses and CIDR ranges allowed without a password (alias of Rspamd's trusted_ips). */
  secure_ip: z.union([z.string().min(1), z.array(z.string().min(1))]).optional(),
  /** Web UI directory served for paths that are not endpoints. */
  static_dir: z.string().min(1).optional(),
  /** Other controllers shown by the web UI: name → { host, path }. */
  neighbours: z.record(z.string(), Neighbour).default({}),
  /** Rows kept by /history. */
  history_rows: z.int().min(1).max(MAX_HISTORY_ROWS).default(200),
  /** Entries kept by the /errors ring. */
  error_elts: z.int().min(1).max(MAX_ERROR_ELTS).default(10),
  /** Refused authentications per address per minute before it gets 429; 0: no throttling. */
  auth_fail_limit: z.int().min(0).max(1_000_000).default(10),
  /**
   * Prefix of the /metrics families: `service_` by default, `rspamd_` to keep
   * dashboards and alert rules written for Rspamd.
   */
  metrics_prefix: z.string().regex(/^[a-zA-Z_:][a-zA-Z0-9_:]*$/, 'an OpenMetrics name prefix (letters, digits, _ and :)').default(DEFAULT_METRIC_PREFIX),
  file_input_peers: FileInputPeers,
  // HTTP encryption (keypair, encrypted_only): see schema-keypair.ts.
  ...WorkerCryptKeys,
  // HTTPS listener (tls): see schema-tls.ts.
  ...WorkerTlsKeys,
});

const Threshold = z.number().nullable();
const ActionObject = z.strictObject({
  threshold: Threshold.optional(),
  score: Threshold.optional(),
  /** How a milter carries the action out (discard / quarantine). */
  milter: z.enum(['discard', 'quarantine']).optional(),
});
const ActionValue = z.union([Threshold, ActionObject]);

/** Accepted action keys: Rspamd's underscore spellings and the wire spellings. */
export const ACTION_KEY_ALIASES: Record<string, string> = {
  reject: 'reject',
  soft_reject: 'soft reject',
  'soft reject': 'soft reject',
  rewrite_subject: 'rewrite subject',
  'rewrite subject': 'rewrite subject',
  add_header: 'add header',
  'add header': 'add header',
  greylist: 'greylist',
  no_action: 'no action',
  'no action': 'no action',
  discard: 'discard',
  quarantine: 'quarantine',
};

const Actions = z.strictObject({
  ...Object.fromEntries(Object.keys(ACTION_KEY_ALIASES).map((k) => [k, ActionValue.optional()])),
  /** Rewrite-subject template: %s original subject, %d score, %% a percent sign. */
  subject: z.string().optional(),
});

const SymbolSettings = z.union([
  z.number(),
  z.strictObject({
    score: z.number().optional(),
    group: z.string().optional(),
    description: z.string().optional(),
    disabled: z.boolean().optional(),
  }),
]);

export const Group = z.strictObject({
  description: z.string().optional(),
  max_score: z.number().min(0).optional(),
  min_score: z.number().max(0).optional(),
  public: z.boolean().optional(),
  /** Symbols that belong to the group, with score overrides. */
  symbols: z.record(z.string(), SymbolSettings).optional(),
});
export const Groups = z.record(z.string(), Group);

const Composite = z.strictObject({
  expression: z.string().min(1),
  score: z.number().optional(),
  group: z.string().optional(),
  description: z.string().optional(),
  policy: z.enum(['default', 'remove_all', 'remove_symbol', 'remove_weight', 'leave']).optional(),
});

const StringList = z.union([z.string(), z.array(z.string())]).transform((v) => (Array.isArray(v) ? v : [v]));

/** A milter address: `a@b` or `<a@b>` (`''`/`<>`, the null sender, only for change_from). */
const MilterAddress = z.string().refine((v) => milterAddress(v) !== undefined, 'an address a milter can send (no spaces, NUL, CR, LF or inner brackets)');
const MilterRcpt = MilterAddress.refine((v) => milterAddress(v) !== '<>', 'a recipient address (not the null sender)');

/** Envelope instructions of a settings rule (the reply's `milter` keys; docs/settings.md). */
const ApplyMilter = z.strictObject({
  change_from: MilterAddress.optional(),
  add_rcpt: z.union([MilterRcpt, z.array(MilterRcpt)]).optional(),
  del_rcpt: z.union([MilterRcpt, z.array(MilterRcpt)]).optional(),
  reject: z.enum(['quarantine', 'discard', 'reject']).optional(),
  spam_header: z.union([z.string().regex(/^[^\0\r\n]*$/, 'one line'), z.record(z.string().regex(/^[!-9;-~]+$/, 'a header name'), z.string().regex(/^[^\0\r\n]*$/, 'one line'))]).optional(),
  no_action: z.boolean().optional(),
});

/** The apply object's keys; values are checked by the engine. */
const Apply = z.strictObject({
  actions: z.record(z.string(), z.number().nullable()).optional(),
  scores: z.record(z.string(), z.number()).optional(),
  symbols_enabled: z.array(z.string()).optional(),
  symbols_disabled: z.array(z.string()).optional(),
  groups_enabled: z.array(z.string()).optional(),
  groups_disabled: z.array(z.string()).optional(),
  policy: z.enum(['default', 'implicit_allow', 'implicit_deny']).optional(),
  whitelist: z.boolean().optional(),
  flags: z.array(z.string()).optional(),
  symbols: z.union([z.array(z.string()), z.record(z.string(), z.unknown())]).optional(),
  subject: z.string().optional(),
  messages: z.record(z.string(), z.string()).optional(),
  add_headers: z.record(z.string(), z.unknown()).optional(),
  remove_headers: z.record(z.string(), z.unknown()).optional(),
  milter: ApplyMilter.optional(),
  variables: z.record(z.string(), z.string()).optional(),
  plugins: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
});

const SETTINGS_PRIORITY: Record<string, number> = { low: 1, medium: 2, high: 3 };
const SettingsRule = z.strictObject({
  priority: z
    .union([z.enum(['low', 'medium', 'high']), z.int().min(0)])
    .transform((p) => (typeof p === 'string' ? (SETTINGS_PRIORITY[p] ?? 1) : p))
    .default(1),
  apply: Apply.default({}),
  ip: StringList.optional(),
  from: StringList.optional(),
  rcpt: StringList.optional(),
  user: StringList.optional(),
  authenticated: z.boolean().optional(),
  request_header: z.record(z.string(), z.string()).optional(),
  /** Selectors over the message: the rule applies when one of them yields a value. */
  selector: StringList.superRefine((list, ctx) => {
    for (const text of list) {
      const r = checkSelector(text);
      if (!r.ok) ctx.addIssue({ code: 'custom', message: `a valid selector (${r.error.message.replace(/^invalid selector: /, '')})` });
    }
  }).optional(),
});


// The worker's DNS resolver (plugin network API, SPF/DKIM/DMARC, RBLs).
const MAX_DNS_TIMEOUT_S = 30; // one try waiting longer than this would outlast any task deadline
export const DnsSection = z.strictObject({
  /** Resolver addresses (`ip`, `ip:port`, `[v6]:port`); the nameservers of /etc/resolv.conf when empty. */
  nameserver: StringList.optional(),
  /** Seconds to wait for one reply before retrying. */
  timeout: Duration.pipe(z.number().positive().max(MAX_DNS_TIMEOUT_S)).default(1),
  /** Tries after the first, rotating through the servers. */
  retransmits: z.int().min(0).max(10).default(2),
  /** Lookups one task may make (Rspamd's dns_max_requests); `forced` lookups are not counted. */
  max_requests: z.int().min(0).default(64),
  /** Cached names at most. */
  cache_size: z.int().min(0).default(4096),
});
export type DnsConfigValue = z.output<typeof DnsSection>;

export const MainConfig = z.strictObject({
  workers: z
    .strictObject({
      normal: NormalWorker.prefault({}),
      controller: ControllerWorker.prefault({}),
      fuzzy: FuzzyWorkerSchema.prefault({}),
      /** The proxy worker (src/proxy/config-schema.ts): milter and HTTP front ends, upstream groups. */
      proxy: ProxyWorkerSchema.prefault({}),
      /** A worker whose event loop sends no heartbeat for this long is killed and replaced; 0: no watchdog. */
      watchdog_timeout: Duration.pipe(z.number().refine((v) => v === 0 || (v >= MIN_WATCHDOG_TIMEOUT_S && v <= MAX_WATCHDOG_TIMEOUT_S), `0 (off) or ${MIN_WATCHDOG_TIMEOUT_S} to ${MAX_WATCHDOG_TIMEOUT_S} seconds`)).default(30),
      /** V8 heap cap (`--max-old-space-size`) of every worker process; 0: V8's own default. */
      max_heap: Size.pipe(z.number().refine((v) => v === 0 || v >= MIN_MAX_HEAP, `0 (V8 default) or a size of at least ${MIN_MAX_HEAP / 1024 ** 2}M`)).default(DEFAULT_MAX_HEAP),
    })
    .prefault({}),
  actions: Actions.prefault({}),
  groups: Groups.default({}),
  symbols: z.record(z.string(), SymbolSettings).default({}),
  composites: z.record(z.string(), Composite).default({}),
  /** Settings rules keyed by id (selectable with `Settings-ID`). */
  settings: z.record(z.string(), SettingsRule).default({}),
  /** Modules switched off (same as `enabled: false` in local.d/<module>.yaml). */
  disabled_modules: z.array(z.string()).default([]),
  /**
   * Users' plugins (docs/plugins.md) beyond local.d/plugins/: files or directories of
   * .ts/.js/.mjs files, relative to the configuration directory.
   */
  plugins: z.strictObject({ paths: z.array(z.string().min(1)).default([]) }).prefault({}),
  logging: z
    .strictObject({
      level: z.enum(LOG_LEVELS).default('info'),
      /** `auto`: text when stdout is a terminal, JSON otherwise (and in a log file). */
      format: z.enum(LOG_FORMAT_SETTINGS).default('auto'),
      /**
       * Every process appends its lines to this file instead of standard output; relative paths
       * are taken from the config directory. Reopened by name when rotated (observability/log.ts).
       */
      file: z.string().min(1).optional(),
    })
    .prefault({}),
  /** Where stores keep their files; relative paths are taken from the config directory. */
  data_dir: z.string().min(1).default('data'),
  /** Back ends of the Bayes, fuzzy, history and key-value stores. */
  stores: StoresSection.prefault({}),
  /** The DNS resolver shared by a worker's tasks. */
  dns: DnsSection.prefault({}),
  /** Host name reported in headers and the reply; the machine's name by default. */
  hostname: z.string().min(1).optional(),
});

export type MainConfigInput = z.input<typeof MainConfig>;
export type MainConfigValue = z.output<typeof MainConfig>;
export type GroupsValue = z.output<typeof Groups>;
export type SymbolSettingsValue = z.output<typeof SymbolSettings>;
