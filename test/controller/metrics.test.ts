// /metrics parsed by a real Prometheus/OpenMetrics text parser (npm parse-prometheus-text-format):
// every metric of interface.md's table is present with its type and labels, values agree with
// /stat, and the text ends with `# EOF`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { FLUSH_INTERVAL_MS } from '../../src/observability/stats-recorder.js';
import { MESSAGES, header, request, startTestController } from './harness.js';

/** interface.md "Metrics": name (prefix `service_` unless noted) → type and label names. */
const TABLE: Array<[string, 'GAUGE' | 'COUNTER', string[]]> = [
  ['service_build_info', 'GAUGE', ['version']],
  ['service_config', 'GAUGE', ['id']],
  ['service_scan_time_average', 'GAUGE', []],
  ['process_start_time_seconds', 'GAUGE', []],
  ['service_read_only', 'GAUGE', []],
  ['service_scanned_total', 'COUNTER', []],
  ['service_learned_total', 'COUNTER', []],
  ['service_spam_total', 'COUNTER', []],
  ['service_ham_total', 'COUNTER', []],
  ['service_connections', 'GAUGE', []],
  ['service_control_connections_total', 'GAUGE', []],
  ...['pools_allocated', 'pools_freed', 'allocated_bytes', 'chunks_allocated', 'shared_chunks_allocated', 'chunks_freed', 'chunks_oversized', 'fragmented'].map(
    (n): [string, 'GAUGE', string[]] => [`service_${n}`, 'GAUGE', []],
  ),
  ['service_learns_total', 'COUNTER', []],
  ['service_actions_total', 'COUNTER', ['type']],
  ...['revision', 'used', 'totals', 'size', 'languages', 'users'].map((n): [string, 'GAUGE', string[]] => [`service_statfiles_${n}`, 'GAUGE', ['symbol', 'type']]),
  ['service_fuzzy_stat', 'GAUGE', ['storage']],
];

test('/metrics: every metric of the table, typed and labelled, parsed by a real parser', async () => {
  const ctl = await startTestController('{ bind: "127.0.0.1:0", password: readpass }');
  try {
    const pw: Array<[string, string]> = [['Password', 'readpass']];
    for (const m of ['spam.eml', 'ham.eml', 'gtube.eml']) {
      const r = await request(ctl.port, { method: 'POST', path: '/checkv2', headers: pw, body: readFileSync(`${MESSAGES}/${m}`) });
      assert.equal(r.status, 200);
    }
    await new Promise((r) => setTimeout(r, FLUSH_INTERVAL_MS + 100));
    const r = await request(ctl.port, { method: 'GET', path: '/metrics', headers: pw });
    assert.equal(r.status, 200);
    assert.equal(header(r, 'Content-Type'), 'application/openmetrics-text; version=1.0.0; charset=utf-8');
    const text = r.body.toString('utf8');
    assert.ok(text.endsWith('\n# EOF\n'), 'ends with # EOF');
    const families = parsePrometheusTextFormat(text);
    const byName = new Map(families.map((f) => [f.name, f]));
    for (const [name, type, labels] of TABLE) {
      const f = byName.get(name);
      assert.ok(f, `${name} present`);
      assert.equal(f.type, type, `${name} type`);
      assert.ok(f.help.length > 0, `${name} has HELP`);
      assert.ok(f.metrics.length > 0, `${name} has a sample`);
      for (const s of f.metrics) {
        assert.deepEqual(Object.keys(s.labels ?? {}).sort(), [...labels].sort(), `${name} labels`);
        assert.ok(Number.isFinite(Number(s.value)), `${name} value ${s.value}`);
      }
    }
    assert.deepEqual(families.map((f) => f.name).sort(), TABLE.map(([n]) => n).sort(), 'nothing else');
    const one = (n: string) => Number(byName.get(n)!.metrics[0]!.value);
    assert.equal(one('service_build_info'), 1);
    assert.equal(one('service_config'), 1);
    assert.equal(one('service_scanned_total'), 3);
    const actions = byName.get('service_actions_total')!.metrics;
    assert.deepEqual(actions.map((s) => s.labels!.type), ['reject', 'soft reject', 'rewrite subject', 'add header', 'greylist', 'no action']);
    assert.equal(actions.reduce((n, s) => n + Number(s.value), 0), 3);
    const stat = JSON.parse((await request(ctl.port, { method: 'GET', path: '/stat', headers: pw })).body.toString()) as { spam_count: number; ham_count: number };
    assert.equal(one('service_spam_total'), stat.spam_count);
    assert.equal(one('service_ham_total'), stat.ham_count);
    assert.ok(one('service_scan_time_average') > 0);
    assert.ok(Math.abs(one('process_start_time_seconds') - Date.now() / 1000) < 60);
  } finally {
    await ctl.close();
  }
});

test('/metrics: metrics_prefix rspamd_ gives Rspamd dashboards their names; a bad prefix is refused', async () => {
  const ctl = await startTestController('{ bind: "127.0.0.1:0", password: readpass, metrics_prefix: rspamd_ }');
  try {
    // The actions family appears once something was scanned, as in Rspamd.
    const scan = await request(ctl.port, { method: 'POST', path: '/checkv2', headers: [['Password', 'readpass']], body: readFileSync(`${MESSAGES}/gtube.eml`) });
    assert.equal(scan.status, 200);
    await new Promise((r) => setTimeout(r, FLUSH_INTERVAL_MS + 100));
    const r = await request(ctl.port, { method: 'GET', path: '/metrics', headers: [['Password', 'readpass']] });
    assert.equal(r.status, 200);
    const names = new Set(parsePrometheusTextFormat(r.body.toString('utf8')).map((f) => f.name));
    for (const [name] of TABLE) {
      const want = name.startsWith('service_') ? `rspamd_${name.slice('service_'.length)}` : name;
      assert.ok(names.has(want), `${want} present`);
    }
    assert.ok(![...names].some((n) => n.startsWith('service_')), 'no service_ family left');
  } finally {
    await ctl.close();
  }
  await assert.rejects(startTestController('{ bind: "127.0.0.1:0", metrics_prefix: "bad prefix" }'), /metrics_prefix/);
});
