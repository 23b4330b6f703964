// antivirus options: one entry per scanner under `rules`, each with Rspamd's `antivirus` module
// options where they apply. No rule, no module: it is off until a rule names its servers.
import { z } from 'zod';
import { isServerAddress, isSocketPath, MAX_SOCKET_PATH_BYTES, socketPathProblem } from '../../core/config-values.js';
import { Duration, ServerList, Size } from '../../core/value-schemas.js';

/** Scanner kinds: ClamAV's clamd, and the two generic external-scanner protocols (docs/antivirus.md). */
export const SCANNER_TYPES = ['clamav', 'tcp', 'http'] as const;
export type ScannerType = (typeof SCANNER_TYPES)[number];

/**
 * `host[:port]` as other servers, or the absolute path of a Unix-domain socket (Debian's clamd
 * listens only on /var/run/clamav/clamd.ctl). Kept here rather than in isServerAddress: the
 * Redis stores and the others cannot use a path.
 */
const Servers = ServerList.superRefine((list, ctx) => {
  if (list.length === 0) ctx.addIssue({ code: 'custom', message: 'a list of servers "host[:port]" or "/socket/path"' });
  for (const server of list) {
    if (isSocketPath(server)) {
      const problem = socketPathProblem(server);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: `a socket path of at most ${MAX_SOCKET_PATH_BYTES} bytes without NUL (${problem})` });
    } else if (!isServerAddress(server)) {
      ctx.addIssue({ code: 'custom', message: `servers "host[:port]" or "/socket/path" (not ${JSON.stringify(server.slice(0, 80))})` });
    }
  }
});

/** Symbol → regular expression over the virus name; a list of such maps is tried in order. */
const PatternTable = z.record(z.string().min(1), z.string());
const Patterns = z.union([PatternTable, z.array(PatternTable)]);

export const AntivirusRule = z.strictObject({
  /** Scanner protocol; the rule's name when absent (a rule called `clamav` is a clamav rule). */
  type: z.enum(SCANNER_TYPES).optional(),
  /** Scanners to ask, `host[:port]` or a socket path (not for http), tried round-robin; the next one on a network error. */
  servers: Servers,
  /** http type: the path the part is POSTed to. */
  path: z.string().startsWith('/').default('/scan'),
  /** Symbol for a detection; CLAM_VIRUS for clamav, `<RULE>_VIRUS` otherwise. */
  symbol: z.string().min(1).optional(),
  /** Symbol for a scan that could not be made; `<symbol>_FAIL` when absent. */
  symbol_fail: z.string().min(1).optional(),
  /** Virus names matching a pattern get that pattern's symbol instead of `symbol`. */
  patterns: Patterns.optional(),
  /** Action forced when a (non-whitelisted) virus is found; reject stops the scan, others are a floor. */
  action: z.string().min(1).optional(),
  /** SMTP text of the forced action; ${SCANNER} is the rule's name, ${VIRUS} the names found. */
  message: z.string().default('${SCANNER}: virus found: "${VIRUS}"'),
  /** Scan each attachment on its own (true) or send the whole message (false). */
  scan_mime_parts: z.boolean().default(true),
  /** With scan_mime_parts: also scan text parts, and images. */
  scan_text_mime: z.boolean().default(false),
  scan_image_mime: z.boolean().default(false),
  /** Content (a part, or the message) larger than this is not scanned; 0: no limit. */
  max_size: Size.default(0),
  /** Seconds one attempt may take. */
  timeout: Duration.default(5),
  /** Further attempts, on other servers when there are several, after a network error. */
  retransmits: z.number().int().min(0).max(10).default(2),
  /** Virus names never reported: a map (file path or URL) or the names themselves. */
  whitelist: z.union([z.string().min(1), z.array(z.string())]).optional(),
  /** Seconds a verdict is kept per content digest in the key-value store; 0: no cache. */
  cache_expire: Duration.default(3600),
  /** Key prefix of the cache; `rs_<rule>_` when absent. */
  prefix: z.string().optional(),
  /** Log clean verdicts at info level (debug otherwise). */
  log_clean: z.boolean().default(false),
});
export type AntivirusRule = z.infer<typeof AntivirusRule>;

/** The type a rule gets from its name when it names none (rule.ts reports a rule with neither). */
export function ruleType(name: string, rule: Pick<AntivirusRule, 'type'>): ScannerType | undefined {
  return rule.type ?? SCANNER_TYPES.find((t) => t === name);
}

export const AntivirusConfig = z.strictObject({
  rules: z.record(z.string().min(1), AntivirusRule).default({}),
}).superRefine((cfg, ctx) => {
  // The http hook's URL needs a host and a port; a path is refused here, naming the rule, rather
  // than at the first scan.
  for (const [name, rule] of Object.entries(cfg.rules)) {
    if (ruleType(name, rule) !== 'http') continue;
    const at = rule.servers.findIndex(isSocketPath);
    if (at >= 0) ctx.addIssue({ code: 'custom', path: ['rules', name, 'servers'], message: `"host[:port]" servers: rule ${name} is of type http, which cannot use the socket path ${rule.servers[at]!.slice(0, 80)}` });
  }
});
export type AntivirusConfig = z.infer<typeof AntivirusConfig>;
