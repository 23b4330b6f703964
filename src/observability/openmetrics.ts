// /metrics in OpenMetrics text: the same blocks and
// order as Rspamd 3.4, with the default `service_` prefix, `process_start_time_seconds`
// unprefixed, and `# EOF` last. As in Rspamd 3.4, counters are declared under their full
// `_total` name (HELP/TYPE and samples share one name), which Prometheus text parsers expect.

export interface MetricsInput {
  version: string;
  configId: string;
  scanTimeAverage: number;
  processStartSeconds: number;
  readOnly: boolean;
  scanned: number;
  learned: number;
  spam: number;
  ham: number;
  connections: number;
  controlConnections: number;
  memory: { poolsAllocated: number; poolsFreed: number; bytesAllocated: number; chunksAllocated: number; sharedChunksAllocated: number; chunksFreed: number; chunksOversized: number; fragmented: number };
  totalLearns: number;
  /** action name → count, in ACTION_ORDER; emitted only when scanned > 0 (as Rspamd does). */
  actions: Array<[string, number]>;
  statfiles: Array<{ symbol: string; type: string; revision: number; used: number; total: number; size: number; languages: number; users: number }>;
  fuzzy: Array<[string, number]>;
}

/** The default prefix of the metric families; `workers.controller.metrics_prefix` changes it. */
export const DEFAULT_METRIC_PREFIX = 'service_';
export const OPENMETRICS_CONTENT_TYPE = 'application/openmetrics-text; version=1.0.0; charset=utf-8';

/** Label values escape `\`, `"` and newlines (OpenMetrics ABNF). */
function labelValue(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function num(v: number): string {
  return Number.isFinite(v) ? String(v) : v > 0 ? '+Inf' : v < 0 ? '-Inf' : 'NaN';
}

class Writer {
  lines: string[] = [];
  constructor(private readonly prefix: string) {}
  block(name: string, type: 'gauge' | 'counter', help: string, samples: Array<[Record<string, string> | undefined, number]>, prefixed = true): void {
    const family = prefixed ? this.prefix + name : name;
    this.lines.push(`# HELP ${family} ${help}`, `# TYPE ${family} ${type}`);
    for (const [labels, v] of samples) {
      const l = labels ? `{${Object.entries(labels).map(([k, x]) => `${k}="${labelValue(x)}"`).join(',')}}` : '';
      this.lines.push(`${family}${l} ${num(v)}`);
    }
  }
}

export function renderOpenMetrics(m: MetricsInput, prefix = DEFAULT_METRIC_PREFIX): string {
  const w = new Writer(prefix);
  w.block('build_info', 'gauge', "A metric with a constant '1' value labeled by version from which the service was built.", [[{ version: m.version }, 1]]);
  w.block('config', 'gauge', "A metric with a constant '1' value labeled by id of the current config.", [[{ id: m.configId }, 1]]);
  w.block('scan_time_average', 'gauge', 'Average messages scan time.', [[undefined, m.scanTimeAverage]]);
  w.block('process_start_time_seconds', 'gauge', 'Start time of the process since unix epoch in seconds.', [[undefined, m.processStartSeconds]], false);
  w.block('read_only', 'gauge', 'Whether the instance is read-only.', [[undefined, m.readOnly ? 1 : 0]]);
  w.block('scanned_total', 'counter', 'Scanned messages.', [[undefined, m.scanned]]);
  w.block('learned_total', 'counter', 'Learned messages.', [[undefined, m.learned]]);
  w.block('spam_total', 'counter', 'Messages classified as spam.', [[undefined, m.spam]]);
  w.block('ham_total', 'counter', 'Messages classified as ham.', [[undefined, m.ham]]);
  w.block('connections', 'gauge', 'Active connections.', [[undefined, m.connections]]);
  w.block('control_connections_total', 'gauge', 'Control connections.', [[undefined, m.controlConnections]]);
  const mem = m.memory;
  w.block('pools_allocated', 'gauge', 'Pools allocated.', [[undefined, mem.poolsAllocated]]);
  w.block('pools_freed', 'gauge', 'Pools freed.', [[undefined, mem.poolsFreed]]);
  w.block('allocated_bytes', 'gauge', 'Bytes allocated.', [[undefined, mem.bytesAllocated]]);
  w.block('chunks_allocated', 'gauge', 'Memory pools: current chunks allocated.', [[undefined, mem.chunksAllocated]]);
  w.block('shared_chunks_allocated', 'gauge', 'Memory pools: current shared chunks allocated.', [[undefined, mem.sharedChunksAllocated]]);
  w.block('chunks_freed', 'gauge', 'Memory pools: current chunks freed.', [[undefined, mem.chunksFreed]]);
  w.block('chunks_oversized', 'gauge', 'Memory pools: current chunks oversized (needs extra allocation/fragmentation).', [[undefined, mem.chunksOversized]]);
  w.block('fragmented', 'gauge', 'Memory pools: fragmented memory waste.', [[undefined, mem.fragmented]]);
  w.block('learns_total', 'counter', 'Total learns.', [[undefined, m.totalLearns]]);
  if (m.scanned > 0) w.block('actions_total', 'counter', 'Actions labelled by action type.', m.actions.map(([type, v]) => [{ type }, v]));
  if (m.statfiles.length) {
    const per = (key: 'revision' | 'used' | 'total' | 'size' | 'languages' | 'users'): Array<[Record<string, string>, number]> =>
      m.statfiles.map((s) => [{ symbol: s.symbol, type: s.type }, s[key]]);
    w.block('statfiles_revision', 'gauge', 'Stat files revision.', per('revision'));
    w.block('statfiles_used', 'gauge', 'Stat files used.', per('used'));
    w.block('statfiles_totals', 'gauge', 'Stat files total.', per('total'));
    w.block('statfiles_size', 'gauge', 'Stat files size.', per('size'));
    w.block('statfiles_languages', 'gauge', 'Stat files languages.', per('languages'));
    w.block('statfiles_users', 'gauge', 'Stat files users.', per('users'));
  }
  if (m.fuzzy.length) w.block('fuzzy_stat', 'gauge', 'Fuzzy stat labelled by storage.', m.fuzzy.map(([storage, v]) => [{ storage }, v]));
  w.lines.push('# EOF');
  return w.lines.join('\n') + '\n';
}
