// `workers.proxy` in mailsift.yaml: the proxy worker, off by default. Keys
// keep Rspamd's names where it has one (`max_retries`, `discard_on_reject`, `spam_header`, an
// upstream group's `hosts`, `key`, `compression`, `settings_id`) so a worker-proxy.inc
// translates line by line; checked strictly like every other section, cross-key problems (two
// defaults, a default that names no group, a group with neither hosts nor self_scan) reported at
// the key at fault.

import { z } from 'zod';
import { decodePublicKey } from '../crypto/keypair.js';
import { WorkerCryptKeys } from '../crypto/keypair-schema.js';
import { parseBind, parseDuration, parseSize } from '../core/config-values.js';
import { LEGACY_COMPAT_MODES } from '../protocol/legacy-command.js';
import { parseHostList, ROTATIONS, type HostList } from './upstreams/host-list.js';

/** Caps what a config can ask for; each keeps a typo from becoming a resource problem. */
export const MAX_PROXY_COUNT = 256; // processes
export const MAX_PROXY_BINDS = 32; // listeners per process
export const MAX_RETRIES_CAP = 20; // attempts per request: more only multiplies a dead group's latency
export const MAX_PROXY_TIMEOUT_S = 3600; // one upstream attempt waiting longer than an hour is a typo
export const MAX_GROUPS = 256; // upstream groups and mirrors each
const MAX_HEADER_VALUE = 998; // a header value that fits one SMTP line

/** Rspamd's default port for the proxy. */
export const DEFAULT_PROXY_BIND = '127.0.0.1:11332';

function parsed<T>(parse: (v: unknown) => T | undefined, expected: string) {
  return z.unknown().transform((v, ctx): T => {
    const out = parse(v);
    if (out === undefined) {
      ctx.issues.push({ code: 'custom', message: expected, input: v });
      return z.NEVER;
    }
    return out;
  });
}

const Duration = parsed(parseDuration, 'a non-negative number of seconds or a string like "8s"');
const Timeout = Duration.pipe(z.number().positive().max(MAX_PROXY_TIMEOUT_S));
const Size = parsed(parseSize, 'a non-negative size in bytes or a string like "50M"');

export type ProxyBindValue = { kind: 'tcp'; host: string; port: number; text: string } | { kind: 'unix'; path: string; text: string };

function parseProxyBind(v: unknown): ProxyBindValue | undefined {
  if (typeof v !== 'string') return undefined;
  const t = v.trim();
  if (t.startsWith('/')) return t.length > 1 && t.length <= 100 && !t.endsWith('/') ? { kind: 'unix', path: t, text: t } : undefined;
  const a = parseBind(t);
  return a ? { kind: 'tcp', host: a.host, port: a.port, text: t } : undefined;
}

const BindOne = parsed(parseProxyBind, 'an address "host:port" ("127.0.0.1:11332", "[::1]:11332", "*:11332") or an absolute unix socket path ("/run/mailsift/proxy.sock")');
const Binds = z
  .union([z.string(), z.array(z.unknown()).min(1).max(MAX_PROXY_BINDS)])
  .transform((v) => (Array.isArray(v) ? v : [v]))
  .pipe(z.array(BindOne));

const HOSTS_EXPECTED = 'an upstream list like "round-robin:10.0.0.1:11333:2, 10.0.0.2, /run/scan.sock" (prefix random:, master-slave:, round-robin: or hash:; host[:port[:priority]], [v6]:port or a socket path)';

/** `hosts`: one string in Rspamd's grammar, or a list of elements (one prefix at most, on the first). */
const Hosts = z.union([z.string(), z.array(z.string()).min(1)]).transform((v, ctx): HostList => {
  const text = Array.isArray(v) ? v.join(',') : v;
  const r = parseHostList(text);
  if (!r.ok) {
    ctx.issues.push({ code: 'custom', message: `${HOSTS_EXPECTED}; here ${r.error}`, input: v });
    return z.NEVER;
  }
  return r.list;
});

const PublicKey = z.string().transform((v, ctx): { text: string; bytes: Uint8Array } => {
  const bytes = decodePublicKey(v.trim());
  if (!bytes) {
    ctx.issues.push({ code: 'custom', message: "the scanner's public key (52 base32 characters, the pubkey of `mailsift keypair`)", input: v });
    return z.NEVER;
  }
  return { text: v.trim(), bytes };
});

const HeaderValue = z.string().min(1).max(MAX_HEADER_VALUE).refine((s) => !/[\r\n\0]/.test(s), 'one line of text');

/** What a master group and a mirror share. */
const LegKeys = {
  hosts: Hosts.optional(),
  /** Rotation when `hosts` has no prefix (Rspamd's proxy asks for round robin). */
  rotation: z.enum(ROTATIONS).optional(),
  /** Encrypt requests to this scanner key (HTTPCrypt), whatever the client did. */
  key: PublicKey.optional(),
  /** zstd-compress request bodies to this group (level 1). */
  compression: z.boolean().default(false),
  /** Accepted for Rspamd configs: mailsift always sends the message inline (no shared memory). */
  local: z.boolean().default(false),
  /** One attempt's time limit; the worker's `timeout` when absent. */
  timeout: Timeout.optional(),
  /** Forces `Settings-ID` on requests to this group (replaces the client's). */
  settings_id: HeaderValue.optional(),
  /** Reuse connections to these hosts (`Connection: keep-alive`). */
  keepalive: z.boolean().default(true),
  /** `false` switches the group off without deleting it. */
  enabled: z.boolean().default(true),
};

const Group = z.strictObject({
  ...LegKeys,
  /** Requests whose `Host` names no group come here. */
  default: z.boolean().default(false),
  /** Scan inside the proxy (its own engine); no hosts. */
  self_scan: z.boolean().default(false),
  /** Key of `hash:` rotation: the proxy's client address (Rspamd), the `IP` header, or the `From` header. */
  hash_by: z.enum(['peer', 'ip', 'from']).default('peer'),
});

const Mirror = z.strictObject({
  ...LegKeys,
  /** Share of sessions copied to this mirror; one coin per session for all mirrors. */
  probability: z.number().min(0).max(1).default(1),
});

export const ProxyWorkerSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    /** Listeners: TCP `host:port` and unix socket paths, one or several. */
    bind: Binds.prefault(DEFAULT_PROXY_BIND),
    count: z.int().min(1).max(MAX_PROXY_COUNT).default(1),
    /** Speak milter (Postfix, Sendmail) instead of HTTP on every listener. */
    milter: z.boolean().default(false),
    /** Time limit of one upstream attempt, and the client's I/O time-out in HTTP mode. */
    timeout: Timeout.default(120),
    /** Attempts per request, each on a host that has not failed it yet while there is one. */
    max_retries: z.int().min(1).max(MAX_RETRIES_CAP).default(5),
    /** Largest client request body (413 above). */
    max_message: Size.default(50 * 1024 * 1024),
    /** Scan requests no group claims with the proxy's own engine (no upstream needed). */
    self_scan: z.boolean().default(false),
    /** The group for requests whose `Host` names none (alternative to a group's `default: true`). */
    default_upstream: z.string().min(1).optional(),
    upstreams: z.record(z.string().min(1), Group).default({}),
    mirrors: z.record(z.string().min(1), Mirror).default({}),
    /** Failure window: a host failing more than `max_errors` times within `error_time` is taken out. */
    error_time: Timeout.optional(),
    max_errors: z.int().min(0).max(1000).optional(),
    /** How long a failed host stays out before it is tried again (plus up to 40 % jitter). */
    revive_time: Duration.pipe(z.number().min(0).max(MAX_PROXY_TIMEOUT_S)).default(60),
    // Milter front end.
    discard_on_reject: z.boolean().default(false),
    quarantine_on_reject: z.boolean().default(false),
    spam_header: HeaderValue.default('X-Spam'),
    reject_message: HeaderValue.default('Spam message rejected'),
    quarantine_message: HeaderValue.default('Spam message quarantined'),
    tempfail_message: HeaderValue.default('Try again later'),
    /** Client-certificate issuer whose subjects count as authenticated users. */
    client_ca_name: z.string().min(1).optional(),
    /**
     * spamc/RSPAMC lines through the proxy (`spamd` or Rspamd 3.4's `rspamd`, as
     * workers.normal.legacy_compat); unset: whatever the normal worker is set to.
     */
    legacy_compat: z.enum(LEGACY_COMPAT_MODES).optional(),
    // HTTP encryption for the proxy's own clients (keypair, encrypted_only): schema-keypair.ts.
    ...WorkerCryptKeys,
  })
  .superRefine((p, ctx) => {
    const issue = (path: (string | number)[], message: string): void => ctx.addIssue({ code: 'custom', path, message, input: undefined });
    const binds = new Set<string>();
    p.bind.forEach((b, i) => {
      const key = b.kind === 'unix' ? b.path : `${b.host}:${b.port}`;
      if (b.kind === 'tcp' && b.port === 0) return; // each port 0 is a port of its own
      if (binds.has(key)) issue(['bind', i], `each address once (${b.text} is listed twice)`);
      binds.add(key);
    });
    const groups = Object.entries(p.upstreams);
    if (groups.length > MAX_GROUPS) issue(['upstreams'], `at most ${MAX_GROUPS} groups`);
    if (Object.keys(p.mirrors).length > MAX_GROUPS) issue(['mirrors'], `at most ${MAX_GROUPS} mirrors`);
    const lower = new Map<string, string>();
    let markedDefault: string | undefined;
    for (const [name, g] of groups) {
      const other = lower.get(name.toLowerCase());
      if (other !== undefined) issue(['upstreams', name], `group names that differ in more than case ("${other}" is the same name: Host lookup ignores case)`);
      lower.set(name.toLowerCase(), name);
      if (g.self_scan && g.hosts) issue(['upstreams', name, 'hosts'], 'no hosts in a self_scan group (it scans inside the proxy)');
      if (!g.self_scan && !g.hosts) issue(['upstreams', name], 'a map with `hosts` (or `self_scan: true`)');
      if (g.self_scan && (g.key || g.compression)) issue(['upstreams', name, g.key ? 'key' : 'compression'], 'no key or compression in a self_scan group (nothing leaves the proxy)');
      if (g.default && g.enabled) {
        if (markedDefault !== undefined) issue(['upstreams', name, 'default'], `one default group ("${markedDefault}" is already default)`);
        else markedDefault = name;
      }
    }
    for (const [name, m] of Object.entries(p.mirrors)) {
      if (!m.hosts) issue(['mirrors', name], 'a map with `hosts`');
    }
    if (p.default_upstream !== undefined) {
      const g = p.upstreams[p.default_upstream];
      if (!g) issue(['default_upstream'], `the name of a group under upstreams (${groups.length ? groups.map(([n]) => `"${n}"`).join(', ') : 'there is none'})`);
      else if (!g.enabled) issue(['default_upstream'], `an enabled group ("${p.default_upstream}" has enabled: false)`);
      else if (markedDefault !== undefined && markedDefault !== p.default_upstream) issue(['default_upstream'], `the group marked default: true ("${markedDefault}"), or only one of the two`);
    }
    const hasDefault = p.default_upstream !== undefined || markedDefault !== undefined;
    if (p.self_scan && hasDefault) issue(['self_scan'], 'self_scan: true or a default group, not both (self_scan makes the proxy itself the default)');
    if (!p.enabled) return;
    const enabled = groups.filter(([, g]) => g.enabled);
    if (enabled.length === 0 && !p.self_scan) issue(['upstreams'], 'at least one enabled upstream group (or self_scan: true) on an enabled proxy');
    const implicit = enabled.length === 1 || enabled.some(([, g]) => g.self_scan);
    if (p.milter && !hasDefault && !p.self_scan && !implicit) issue(['milter'], 'a default group for milter sessions (they carry no Host): mark one with default: true');
  });

export type ProxyWorkerValue = z.output<typeof ProxyWorkerSchema>;
