// One configured scanner compiled at setup: its protocol, servers with ports, symbols, and the
// virus-name patterns as regular expressions. Nothing here runs per message.
import { isSocketPath } from '../../core/config-values.js';
import { ruleType, type AntivirusRule, type ScannerType } from './config.js';

/**
 * A host and port, or a Unix-domain socket path with no port: the same shape the task's TCP
 * calls take, so a server is passed on as it is.
 */
export type ScannerServer = { host: string; port: number } | { host: `/${string}`; port?: undefined };

/** A server as the log and the fail symbol show it: `host:port`, or the socket path alone. */
export function serverName(server: ScannerServer): string {
  return server.port === undefined ? server.host : `${server.host}:${server.port}`;
}

export interface CompiledRule {
  name: string;
  type: ScannerType;
  servers: ScannerServer[];
  symbol: string;
  symbolFail: string;
  /** Tried in order; the first pattern that matches a virus name gives its symbol. */
  patterns: Array<{ symbol: string; re: RegExp }>;
  opts: AntivirusRule;
  /** Cache key prefix, or undefined when the rule keeps no cache. */
  cachePrefix: string | undefined;
  /** Round-robin position over `servers`, shared by the scans of this worker. */
  next: number;
}

/** Default ports: clamd's own, HTTP's; the line protocol has none and needs one written. */
const DEFAULT_PORTS: Record<ScannerType, number | undefined> = { clamav: 3310, http: 80, tcp: undefined };

export class RuleError extends Error {}

/**
 * `host`, `host:port`, `[v6]`, `[v6]:port`, a bare IPv6 address, or an absolute socket path
 * (the config schema checked the shape).
 */
export function parseServer(text: string, defaultPort: number | undefined): ScannerServer {
  if (isSocketPath(text)) return { host: text };
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  let host = text;
  let port: string | undefined;
  if (bracket) {
    host = bracket[1]!;
    port = bracket[2];
  } else if (text.indexOf(':') === text.lastIndexOf(':') && text.includes(':')) {
    [host, port] = text.split(':') as [string, string];
  }
  const p = port !== undefined ? Number(port) : defaultPort;
  if (p === undefined) throw new RuleError(`server ${text} needs a port`);
  return { host, port: p };
}

function defaultSymbol(name: string, type: ScannerType): string {
  return type === 'clamav' ? 'CLAM_VIRUS' : `${name.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}_VIRUS`;
}

export function compileRule(name: string, opts: AntivirusRule, withCache: boolean): CompiledRule {
  const type = ruleType(name, opts);
  if (type === undefined) throw new RuleError(`rule ${name} needs a type (clamav, tcp or http)`);
  const servers = opts.servers.map((s) => parseServer(s, DEFAULT_PORTS[type]));
  // The config schema refuses this already; a rule built another way gets the same answer.
  if (type === 'http' && servers.some((s) => s.port === undefined)) throw new RuleError(`rule ${name} is of type http, which cannot use a socket path`);
  const symbol = opts.symbol ?? defaultSymbol(name, type);
  const patterns: CompiledRule['patterns'] = [];
  for (const table of Array.isArray(opts.patterns) ? opts.patterns : opts.patterns ? [opts.patterns] : []) {
    for (const [sym, source] of Object.entries(table)) {
      try {
        patterns.push({ symbol: sym, re: new RegExp(source) });
      } catch (e) {
        throw new RuleError(`rule ${name}: pattern for ${sym} is not a regular expression: ${(e as Error).message}`);
      }
    }
  }
  return {
    name,
    type,
    servers,
    symbol,
    symbolFail: opts.symbol_fail ?? `${symbol}_FAIL`,
    patterns,
    opts,
    cachePrefix: withCache && opts.cache_expire > 0 ? opts.prefix ?? `rs_${name}_` : undefined,
    next: 0,
  };
}

/** The symbol a virus name is reported under. */
export function symbolFor(rule: CompiledRule, virus: string): string {
  for (const p of rule.patterns) if (p.re.test(virus)) return p.symbol;
  return rule.symbol;
}

/** Every symbol the rule may insert. */
export function ruleSymbols(rule: CompiledRule): string[] {
  return [...new Set([rule.symbol, rule.symbolFail, ...rule.patterns.map((p) => p.symbol)])];
}
