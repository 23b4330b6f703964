// Loads a configuration directory: mailsift.yaml and groups.yaml, each with its local.d
// (merged) and override.d (replacing) layers, plus per-module files: modules.d (shipped), then
// local.d (merged over it) and override.d (replacing both).
// Every problem in every file is collected, whatever else is wrong (a YAML error in one file or
// an invalid mailsift.yaml does not stop the other files being checked); any problem means no
// LoadedConfig at all, so the service never starts half-configured.

import { availableParallelism, hostname as osHostname } from 'node:os';
import { readdir, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { EngineConfig } from '../engine/contract.js';
import { resolveLogFormat, type LogFormat, type LogLevel } from '../observability/log.js';
import { loadDictionary, type ZstdDictionary } from './dictionaries.js';
import { ExpressionError, parseExpression } from '../rule-libs/expression/composite-expr.js';
import { ConfigError, describeValue, type ConfigIssue } from './errors.js';
import { toConfigIssues } from './issues.js';
import { isPlainMap, layer, type LayeredDoc, type PlainMap } from './merge.js';
import { moduleConfigIssues, type ModuleFiles, type ModuleSchemaRef } from './modules.js';
import { controllerPluginIssues, userPluginIssues } from './plugin-files.js';
import { ACTION_KEY_ALIASES, Groups, MainConfig, type GroupsValue, type MainConfigValue } from './schema.js';
import type { StoresConfigValue } from '../storage/config-schema.js';
import { storeFileIssues } from './store-files.js';
import { strayFileIssues } from './stray-files.js';
import { mergeGroups, toEngineConfig } from './to-engine.js';
import { pathKey, readYamlSource, type Position } from './yaml-source.js';
import { workerCrypt, type WorkerCryptConfig } from '../crypto/keypair-schema.js';
import type { FuzzyWorkerConfig } from '../fuzzy-storage/worker-config.js';
import { workerTls, type WorkerTlsConfig } from './schema-tls.js';
import { proxyRuntimeConfig, type ProxyRuntimeConfig } from '../proxy/config.js';
import type { LegacyCompat } from '../protocol/legacy-command.js';

export const MAIN_FILE = 'mailsift.yaml';
export const GROUPS_FILE = 'groups.yaml';
/** Files in local.d/override.d that layer over conf files; every other `<name>.yaml` is a module's. */
const CONF_FILES = new Set([MAIN_FILE, GROUPS_FILE]);
const YAML_EXT = '.yaml';

export interface NormalWorkerConfig {
  host: string;
  port: number;
  /** Processes to run (`auto` already resolved to the number of cores). */
  count: number;
  /** Largest accepted request body in bytes (413 above). */
  maxMessage: number;
  /** Per-task deadline in seconds (also EngineConfig.taskTimeout). */
  taskTimeout: number;
  /** Seconds an idle kept-alive connection stays open. */
  keepaliveTimeout: number;
  /** Shape of the transport's DictionarySet (src/http/zstd.ts). */
  dictionaries: { input?: ZstdDictionary; output?: ZstdDictionary };
  /** Peers allowed to name local files and shm segments as the message; [] refuses all. */
  fileInputPeers: string[];
  /** spamc/RSPAMC text protocol behaviour (src/protocol/legacy-command.ts). */
  legacyCompat: LegacyCompat;
  /** HTTP encryption, when the worker has a keypair. */
  crypt?: WorkerCryptConfig;
  /** HTTPS listener (schema-tls.ts). */
  tls?: WorkerTlsConfig;
}

export interface ControllerWorkerConfig {
  enabled: boolean;
  host: string;
  port: number;
  password?: string;
  enablePassword?: string;
  /** Addresses and CIDRs trusted without a password; empty: none configured. */
  secureIp: string[];
  /** Absolute web UI directory. */
  staticDir?: string;
  neighbours: Record<string, { host: string; path?: string }>;
  historyRows: number;
  /** Prefix of the /metrics families (`service_`, or `rspamd_` for Rspamd's dashboards). */
  metricsPrefix: string;
  errorElts: number;
  /** Refused authentications per address per minute before 429; 0 disables throttling. */
  authFailLimit: number;
  /** Peers allowed to name local files and shm segments as the message; [] refuses all. */
  fileInputPeers: string[];
  /** HTTP encryption, when the worker has a keypair. */
  crypt?: WorkerCryptConfig;
  /** HTTPS listener (schema-tls.ts). */
  tls?: WorkerTlsConfig;
}

export interface LoadedConfig {
  /** Absolute path of the configuration directory. */
  dir: string;
  engine: EngineConfig;
  /** `fuzzy`: the fuzzy storage worker (src/fuzzy-storage/worker-config.ts), as validated. */
  workers: {
    normal: NormalWorkerConfig;
    controller: ControllerWorkerConfig;
    fuzzy: FuzzyWorkerConfig;
    /** The proxy worker (src/proxy/config.ts), resolved; `enabled` false unless configured. */
    proxy: ProxyRuntimeConfig;
    /** Seconds a worker's event loop may go without a heartbeat before it is killed and replaced; 0: off. */
    watchdogTimeout: number;
    /** V8 heap cap of each worker process in bytes (`--max-old-space-size`); 0: V8's default. */
    maxHeap: number;
  };
  logging: { level: LogLevel; format: LogFormat; file?: string };
  /** Absolute path where stores keep their files. */
  dataDir: string;
  /** The `stores:` section (back end per store); src/storage/index.ts openStores reads it. */
  stores: StoresConfigValue;
  hostname: string;
  /** Every file read, in the order applied (display paths). */
  files: string[];
  /** Each module's layered config document with positions, for messages about module configs. */
  moduleDocs: Record<string, LayeredDoc>;
}

/**
 * `plugins.paths` of mailsift.yaml (all layers), read before the rest of the configuration: the
 * plugins must be loaded before module files can be checked against them. Anything but a list of
 * strings is ignored here; the schema reports it when the whole configuration is read.
 */
export async function configuredPluginPaths(dir: string): Promise<string[]> {
  const absDir = resolve(dir);
  const doc = await readLayers(absDir, MAIN_FILE);
  const plugins = (doc.value as { plugins?: unknown }).plugins;
  const paths = typeof plugins === 'object' && plugins !== null ? (plugins as { paths?: unknown }).paths : undefined;
  return Array.isArray(paths) ? paths.filter((p): p is string => typeof p === 'string' && p !== '').map((p) => resolve(absDir, p)) : [];
}

export function displayPath(abs: string): string {
  const rel = relative(process.cwd(), abs);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : abs;
}

async function readLayers(dir: string, name: string): Promise<LayeredDoc> {
  const read = (p: string) => readYamlSource(p, displayPath(p));
  const [base, local, override] = await Promise.all([
    read(join(dir, name)),
    read(join(dir, 'local.d', name)),
    read(join(dir, 'override.d', name)),
  ]);
  return layer(base, local, override, displayPath(join(dir, name)));
}

async function yamlNames(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((f) => f.endsWith(YAML_EXT));
  } catch {
    return []; // local.d / override.d are optional
  }
}

/** Action keys that name the same action twice (`add_header` and `add header`). */
function duplicateActions(doc: LayeredDoc): ConfigIssue[] {
  const actions = doc.value.actions;
  if (!isPlainMap(actions)) return [];
  const seen = new Map<string, string>();
  const issues: ConfigIssue[] = [];
  for (const key of Object.keys(actions)) {
    const wire = ACTION_KEY_ALIASES[key];
    if (!wire) continue;
    const first = seen.get(wire);
    if (first === undefined) seen.set(wire, key);
    else {
      const p = doc.positions.get(pathKey(['actions', key], true));
      issues.push({ file: p?.file ?? doc.blame, ...(p ? { line: p.line, column: p.column } : {}), path: `actions.${key}`, expected: `one spelling per action ("${first}" already sets "${wire}")`, found: `"${key}"` });
    }
  }
  return issues;
}

/**
 * groups.yaml is a map of group name → group; a file written as `groups: {…}` (the key
 * mailsift.yaml uses) is accepted too, with its positions re-keyed to match.
 */
function unwrapGroups(doc: LayeredDoc): void {
  const keys = Object.keys(doc.value);
  if (keys.length !== 1 || keys[0] !== 'groups' || !isPlainMap(doc.value.groups)) return;
  doc.value = doc.value.groups;
  const prefix = pathKey(['groups']).slice('val:'.length);
  const moved = new Map<string, Position>();
  for (const [k, p] of doc.positions) {
    const kind = k.slice(0, 4);
    const rest = k.slice(4);
    if (rest.startsWith(`${prefix}\u0000`)) moved.set(kind + rest.slice(prefix.length + 1), p);
  }
  doc.positions = moved;
}

/** Adds line:column to an issue found after validation (its path has no list indexes). */
function withPosition(doc: LayeredDoc, issue: ConfigIssue): ConfigIssue {
  const segs = issue.path.split('.');
  for (let n = segs.length; n > 0; n--) {
    const p = doc.positions.get(pathKey(segs.slice(0, n)));
    if (p) return { ...issue, file: p.file, line: p.line, column: p.column };
  }
  return issue;
}

interface ModuleConfigs extends ModuleFiles {
  disabled: string[];
  files: string[];
  issues: ConfigIssue[];
}

/** Shipped module options (Rspamd's conf/modules.d): the layer local.d merges over and override.d replaces. */
export const MODULES_DIR = 'modules.d';

async function readModuleConfigs(dir: string): Promise<ModuleConfigs> {
  const shipped = new Set(await yamlNames(join(dir, MODULES_DIR)));
  const names = new Set([...shipped, ...(await yamlNames(join(dir, 'local.d'))), ...(await yamlNames(join(dir, 'override.d')))]);
  const out: ModuleConfigs = { values: {}, docs: {}, disabled: [], files: [], issues: [] };
  for (const file of [...names].sort()) {
    if (CONF_FILES.has(file)) continue;
    const name = file.slice(0, -YAML_EXT.length);
    const [base, local, override] = await Promise.all(
      [MODULES_DIR, 'local.d', 'override.d'].map((sub) => readYamlSource(join(dir, sub, file), displayPath(join(dir, sub, file)))),
    );
    const doc = layer(shipped.has(file) ? base : undefined, local, override, displayPath(join(dir, 'local.d', file)));
    out.files.push(...doc.files);
    out.issues.push(...doc.issues);
    const { enabled, ...rest } = doc.value as PlainMap & { enabled?: unknown };
    if (enabled !== undefined && typeof enabled !== 'boolean') {
      const p = doc.positions.get(pathKey(['enabled']));
      out.issues.push({ file: p?.file ?? doc.blame, ...(p ? { line: p.line, column: p.column } : {}), path: 'enabled', expected: 'true or false', found: describeValue(enabled) });
    }
    if (enabled === false) out.disabled.push(name);
    out.values[name] = rest;
    out.docs[name] = doc;
  }
  return out;
}

export interface LoadOptions {
  /** Check module files and `disabled_modules` against these modules (names and schemas). */
  modules?: ReadonlyArray<ModuleSchemaRef>;
  /**
   * Also check what only a starting server needs (configtest and serve): that the SQLite stores
   * can be created and written.
   */
  runtime?: boolean;
  /**
   * Also load the controller plugin files and the users' plugins and report each that does not
   * load (configtest). A server starts without them instead: it logs each with its reason.
   */
  plugins?: boolean;
}

export interface ConfigReport {
  /** The configuration, when no issue was found. */
  config?: LoadedConfig;
  /** Every issue in every file (ConfigError sorts them by file and line). */
  issues: ConfigIssue[];
}

/** A composite expression the engine could not parse, as an issue at its key. */
function compositeIssues(doc: LayeredDoc, composites: MainConfigValue['composites']): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const [name, c] of Object.entries(composites)) {
    try {
      parseExpression(c.expression);
    } catch (err) {
      if (!(err instanceof ExpressionError)) throw err;
      const p = doc.positions.get(pathKey(['composites', name, 'expression']));
      issues.push({ file: p?.file ?? doc.blame, ...(p ? { line: p.line, column: p.column } : {}), path: `composites.${name}.expression`, expected: `a composite expression (${err.message})`, found: describeValue(c.expression) });
    }
  }
  return issues;
}

/**
 * `data_dir` and `stores` as far as they are valid on their own, so the stores' files are
 * checked even when another part of mailsift.yaml is wrong.
 */
function storageOf(main: PlainMap): { data_dir: string; stores: StoresConfigValue } | undefined {
  const dataDir = MainConfig.shape.data_dir.safeParse(main.data_dir);
  const stores = MainConfig.shape.stores.safeParse(main.stores);
  return dataDir.success && stores.success ? { data_dir: dataDir.data, stores: stores.data } : undefined;
}

/**
 * Reads and validates `dir`, collecting every issue of every file; `config` is set only when
 * there is none. A directory without mailsift.yaml yields the embedded defaults.
 */
export async function readConfig(dir: string, opts: LoadOptions = {}): Promise<ConfigReport> {
  const absDir = resolve(dir);
  const st = await stat(absDir).catch(() => undefined);
  if (!st?.isDirectory()) {
    return { issues: [{ file: displayPath(absDir), path: '', expected: 'a configuration directory', found: st ? 'a file' : 'nothing (no such directory)' }] };
  }

  const [mainDoc, groupsDoc, moduleConfigs] = await Promise.all([
    readLayers(absDir, MAIN_FILE),
    readLayers(absDir, GROUPS_FILE),
    readModuleConfigs(absDir),
  ]);
  unwrapGroups(groupsDoc);
  const moduleNames = opts.modules?.map((m) => m.name);
  const issues: ConfigIssue[] = [
    ...mainDoc.issues,
    ...groupsDoc.issues,
    ...moduleConfigs.issues,
    ...duplicateActions(mainDoc),
    ...(await strayFileIssues(absDir, displayPath, CONF_FILES, moduleNames)),
  ];

  const main = MainConfig.safeParse(mainDoc.value);
  if (!main.success) issues.push(...toConfigIssues(MainConfig, mainDoc, main.error.issues));
  const groups = Groups.safeParse(groupsDoc.value);
  if (!groups.success) issues.push(...toConfigIssues(Groups, groupsDoc, groups.error.issues));
  if (opts.modules) issues.push(...moduleConfigIssues(moduleConfigs, mainDoc, main.success ? main.data.disabled_modules : mainDoc.value.disabled_modules, opts.modules));
  if (opts.runtime) {
    const storage = main.success ? main.data : storageOf(mainDoc.value);
    if (storage) issues.push(...storeFileIssues(resolve(absDir, storage.data_dir), storage.stores, (i) => withPosition(mainDoc, i), mainDoc.blame));
  }
  if (opts.plugins) {
    issues.push(...(await controllerPluginIssues(absDir, displayPath)));
    issues.push(...(await userPluginIssues(absDir, await configuredPluginPaths(absDir), displayPath)));
  }
  if (!main.success || !groups.success) return { issues };

  const cfg: MainConfigValue = main.data;
  issues.push(...compositeIssues(mainDoc, cfg.composites));
  const [input, output] = await Promise.all([
    loadDictionary(absDir, cfg.workers.normal.zstd_input_dictionary, 'workers.normal.zstd_input_dictionary', mainDoc.blame),
    loadDictionary(absDir, cfg.workers.normal.zstd_output_dictionary, 'workers.normal.zstd_output_dictionary', mainDoc.blame),
  ]);
  issues.push(...[...input.issues, ...output.issues].map((i) => withPosition(mainDoc, i)));
  const crypt = { normal: workerCrypt(cfg.workers.normal), controller: workerCrypt(cfg.workers.controller), proxy: workerCrypt(cfg.workers.proxy) };
  for (const [name, c] of Object.entries(crypt)) {
    if (c.problem) issues.push(withPosition(mainDoc, { file: mainDoc.blame, path: `workers.${name}.encrypted_only`, expected: c.problem, found: 'no keypair' }));
  }
  const tls = { normal: workerTls(cfg.workers.normal.tls, absDir), controller: workerTls(cfg.workers.controller.tls, absDir) };
  for (const [name, t] of Object.entries(tls)) {
    for (const p of t.problems) issues.push(withPosition(mainDoc, { file: mainDoc.blame, path: `workers.${name}.tls.${p.key}`, expected: p.expected, found: p.found }));
  }
  // Positions are looked up by dotted path; the message spells a list item as zod does (`bind[0]`).
  issues.push(...proxyBindClashes(cfg).map((i) => ({ ...withPosition(mainDoc, { ...i, file: mainDoc.blame }), path: i.path.replace(/\.(\d+)$/, '[$1]') })));
  if (issues.length) return { issues };

  const hostname = cfg.hostname ?? osHostname();
  const allGroups: GroupsValue = mergeGroups(groups.data, cfg.groups);
  const normal = cfg.workers.normal;
  const engine = toEngineConfig(cfg, allGroups, moduleConfigs.values, moduleConfigs.disabled, hostname);
  const config: LoadedConfig = {
    dir: absDir,
    engine,
    workers: {
      normal: {
        host: normal.bind.host,
        port: normal.bind.port,
        count: normal.count === 'auto' ? availableParallelism() : normal.count,
        maxMessage: normal.max_message,
        taskTimeout: normal.task_timeout,
        keepaliveTimeout: normal.keepalive_timeout,
        dictionaries: {
          ...(input.dictionary ? { input: input.dictionary } : {}),
          ...(output.dictionary ? { output: output.dictionary } : {}),
        },
        fileInputPeers: normal.file_input_peers,
        legacyCompat: normal.legacy_compat,
        ...(crypt.normal.crypt ? { crypt: crypt.normal.crypt } : {}),
        ...(tls.normal.tls ? { tls: tls.normal.tls } : {}),
      },
      controller: { ...controllerConfig(cfg.workers.controller, absDir), ...(crypt.controller.crypt ? { crypt: crypt.controller.crypt } : {}), ...(tls.controller.tls ? { tls: tls.controller.tls } : {}) },
      fuzzy: cfg.workers.fuzzy,
      proxy: proxyRuntimeConfig(cfg.workers.proxy, engine.actions, normal.legacy_compat),
      watchdogTimeout: cfg.workers.watchdog_timeout,
      maxHeap: cfg.workers.max_heap,
    },
    // Resolved here, once: every process of the server then writes the same format. A log file
    // is no terminal: `auto` means JSON there.
    logging: {
      level: cfg.logging.level,
      format: cfg.logging.file ? resolveLogFormat(cfg.logging.format, {}) : resolveLogFormat(cfg.logging.format),
      ...(cfg.logging.file ? { file: resolve(absDir, cfg.logging.file) } : {}),
    },
    dataDir: resolve(absDir, cfg.data_dir),
    stores: cfg.stores,
    hostname,
    files: [...mainDoc.files, ...groupsDoc.files, ...moduleConfigs.files],
    moduleDocs: moduleConfigs.docs,
  };
  return { config, issues: [] };
}

/** readConfig that throws ConfigError listing every issue. */
export async function loadConfig(dir: string, opts: LoadOptions = {}): Promise<LoadedConfig> {
  const report = await readConfig(dir, opts);
  if (!report.config) throw new ConfigError(report.issues);
  return report.config;
}

/**
 * A proxy bind on the scan or controller port: under node:cluster the workers would share that
 * socket and each connection would land on either role at random.
 */
function proxyBindClashes(cfg: MainConfigValue): Array<Omit<ConfigIssue, 'file'>> {
  const p = cfg.workers.proxy;
  if (!p.enabled) return [];
  const taken = new Map<string, string>([[`${cfg.workers.normal.bind.host}:${cfg.workers.normal.bind.port}`, 'workers.normal.bind']]);
  if (cfg.workers.controller.enabled) taken.set(`${cfg.workers.controller.bind.host}:${cfg.workers.controller.bind.port}`, 'workers.controller.bind');
  const out: Array<Omit<ConfigIssue, 'file'>> = [];
  p.bind.forEach((b, i) => {
    if (b.kind !== 'tcp' || b.port === 0) return;
    const other = taken.get(`${b.host}:${b.port}`);
    if (other) out.push({ path: `workers.proxy.bind.${i}`, expected: `an address no other worker listens on (${other} is ${b.text})`, found: `"${b.text}"` });
  });
  return out;
}

function controllerConfig(c: MainConfigValue['workers']['controller'], absDir: string): ControllerWorkerConfig {
  return {
    enabled: c.enabled,
    host: c.bind.host,
    port: c.bind.port,
    ...(c.password !== undefined ? { password: c.password } : {}),
    ...(c.enable_password !== undefined ? { enablePassword: c.enable_password } : {}),
    secureIp: c.secure_ip === undefined ? [] : Array.isArray(c.secure_ip) ? c.secure_ip : [c.secure_ip],
    ...(c.static_dir !== undefined ? { staticDir: resolve(absDir, c.static_dir) } : {}),
    neighbours: c.neighbours,
    historyRows: c.history_rows,
    errorElts: c.error_elts,
    authFailLimit: c.auth_fail_limit,
    metricsPrefix: c.metrics_prefix,
    fileInputPeers: c.file_input_peers,
  };
}
