// The proxy worker's configuration as the code uses it: resolved from
// the validated `workers.proxy` section, with every default and derived limit filled in, so the
// front ends (HTTP, milter, legacy lines) and the relay read plain values.

import type { ActionConfig } from '../engine/contract.js';
import type { KexKeypair } from '../crypto/keypair.js';
import { DEFAULT_LEGACY_COMPAT, type LegacyCompat } from '../protocol/legacy-command.js';
import type { ProxyBindValue, ProxyWorkerValue } from './config-schema.js';
import { milterActions, milterOptions, type MilterOptions } from './milter/options.js';
import type { HostSpec, Rotation } from './upstreams/host-list.js';
import type { FailureLimits } from './upstreams/upstream-set.js';

export type ProxyBind = ProxyBindValue;

/** Where a leg goes and how: shared by master groups and mirrors. */
export interface LegConfig {
  name: string;
  hosts: HostSpec[];
  rotation: Rotation;
  /** Scanner public key (base32 and bytes): the leg is HTTP-encrypted. */
  key?: { text: string; bytes: Uint8Array };
  compression: boolean;
  local: boolean;
  timeoutMs: number;
  settingsId?: string;
  keepalive: boolean;
}

export interface UpstreamGroupConfig extends LegConfig {
  /** Scan in the proxy's own engine; `hosts` is empty. */
  selfScan: boolean;
  /** Key of hash rotation: the proxy's client address, the `IP` header or the `From` header. */
  hashBy: 'peer' | 'ip' | 'from';
}

export interface MirrorConfig extends LegConfig {
  probability: number;
}

export interface ProxyRuntimeConfig {
  enabled: boolean;
  listen: ProxyBind[];
  count: number;
  mode: 'milter' | 'http';
  /** One upstream attempt's limit, and the HTTP client's I/O time-out. */
  timeoutMs: number;
  /** Attempts per request (≥ 1). */
  maxRetries: number;
  /** Largest client request body. */
  maxMessage: number;
  /** Requests no group claims are scanned in-process. */
  selfScan: boolean;
  /** Enabled groups by name as written; looked up case-insensitively. */
  upstreams: Record<string, UpstreamGroupConfig>;
  /** The group for requests whose `Host` names none; undefined: self-scan (when `selfScan`) or "Backend not found". */
  defaultUpstream?: string;
  mirrors: MirrorConfig[];
  failure: FailureLimits;
  /** HTTP encryption for the proxy's own clients. */
  keypair?: KexKeypair;
  encryptedOnly: boolean;
  /** What the milter front end is told, resolved with the milter module's defaults and caps. */
  milter: MilterOptions;
  /** spamc/RSPAMC behaviour of the legacy lines (legacy_compat). */
  legacyCompat: LegacyCompat;
}

/** Rspamd's revive jitter: a failed host comes back after 100–140 % of revive_time. */
export const REVIVE_JITTER = 0.4;

function legOf(name: string, v: ProxyWorkerValue['upstreams'][string] | ProxyWorkerValue['mirrors'][string], workerTimeoutS: number): LegConfig {
  return {
    name,
    hosts: v.hosts?.hosts ?? [],
    rotation: v.hosts?.rotation ?? v.rotation ?? 'round-robin',
    ...(v.key ? { key: v.key } : {}),
    compression: v.compression,
    local: v.local,
    timeoutMs: (v.timeout ?? workerTimeoutS) * 1000,
    ...(v.settings_id !== undefined ? { settingsId: v.settings_id } : {}),
    keepalive: v.keepalive,
  };
}

/**
 * The default group: the one named by `default_upstream` or marked `default: true`, else
 * the first self-scan group, else the only group; none when the worker self-scans instead.
 */
function defaultGroup(p: ProxyWorkerValue, groups: Record<string, UpstreamGroupConfig>): string | undefined {
  if (p.default_upstream !== undefined) return p.default_upstream;
  const names = Object.keys(groups);
  const marked = names.find((n) => p.upstreams[n]!.default);
  if (marked !== undefined) return marked;
  if (p.self_scan) return undefined;
  return names.find((n) => groups[n]!.selfScan) ?? (names.length === 1 ? names[0] : undefined);
}

/**
 * `normalLegacyCompat`: the normal worker's legacy_compat, which a proxy without its own
 * `legacy_compat` follows, so spamc sees the same answers through the proxy as directly.
 */
export function proxyRuntimeConfig(p: ProxyWorkerValue, actions: Record<string, ActionConfig>, normalLegacyCompat: LegacyCompat = DEFAULT_LEGACY_COMPAT): ProxyRuntimeConfig {
  const upstreams: Record<string, UpstreamGroupConfig> = {};
  for (const [name, g] of Object.entries(p.upstreams)) {
    if (!g.enabled) continue;
    upstreams[name] = { ...legOf(name, g, p.timeout), selfScan: g.self_scan, hashBy: g.hash_by };
  }
  const mirrors: MirrorConfig[] = [];
  for (const [name, m] of Object.entries(p.mirrors)) {
    if (m.enabled) mirrors.push({ ...legOf(name, m, p.timeout), probability: m.probability });
  }
  const defaultUpstream = defaultGroup(p, upstreams);
  return {
    enabled: p.enabled,
    listen: p.bind,
    count: p.count,
    mode: p.milter ? 'milter' : 'http',
    timeoutMs: p.timeout * 1000,
    maxRetries: p.max_retries,
    maxMessage: p.max_message,
    selfScan: p.self_scan,
    upstreams,
    ...(defaultUpstream !== undefined ? { defaultUpstream } : {}),
    mirrors,
    // Rspamd's proxy sets these from its own options: a host may fail every attempt of
    // one request (max_retries − 1 errors) and stay up; one more inside the window takes it out.
    failure: {
      errorTimeMs: (p.error_time ?? p.max_retries * p.timeout) * 1000,
      maxErrors: p.max_errors ?? p.max_retries - 1,
      reviveTimeMs: p.revive_time * 1000,
      reviveJitter: REVIVE_JITTER,
    },
    ...(p.keypair ? { keypair: p.keypair } : {}),
    encryptedOnly: p.encrypted_only,
    milter: milterOptions({
      spamHeader: p.spam_header,
      rejectMessage: p.reject_message,
      quarantineMessage: p.quarantine_message,
      tempfailMessage: p.tempfail_message,
      discardOnReject: p.discard_on_reject,
      quarantineOnReject: p.quarantine_on_reject,
      ...(p.client_ca_name !== undefined ? { clientCaName: p.client_ca_name } : {}),
      // A message larger than the proxy takes is accepted unscanned rather than sent to be refused.
      maxMessage: p.max_message,
      actions: milterActions(actions),
    }),
    legacyCompat: p.legacy_compat ?? normalLegacyCompat,
  };
}
