// Status: counters, throughput, action pie, scan time, learned counts, store and worker health,
// the error ring, uptime and version. Refreshes itself every REFRESH_MS.

import { useState } from 'preact/hooks';
import { ACTIONS, type GraphPoint, type GraphType } from '../api';
import { LineChart, type Series } from '../components/line-chart';
import { PieChart } from '../components/pie-chart';
import { Problem } from '../components/problem';
import { useAsync } from '../components/use-async';
import { fmtBytes, fmtDuration, fmtInt, fmtTime } from '../format';
import type { PageProps } from '../session';

const REFRESH_MS = 10_000;
/** The graph ranges offered; `hour` is cut from the `day` archive (1-minute steps). */
const RANGES: ReadonlyArray<{ id: string; label: string; type: GraphType; cutSeconds?: number }> = [
  { id: 'hour', label: 'Hour', type: 'day', cutSeconds: 3600 },
  { id: 'day', label: 'Day', type: 'day' },
  { id: 'week', label: 'Week', type: 'week' },
  { id: 'month', label: 'Month', type: 'month' },
  { id: 'year', label: 'Year', type: 'year' },
];
const actionVar = (a: string): string => `--action-${a.replace(/\s+/g, '-')}`;

/** Scans given a spam action (everything but `no action` and `greylist`), as /stat counts spam. */
function spamOf(actions: Record<string, number>): number {
  return Object.entries(actions).reduce((n, [a, k]) => (a === 'no action' || a === 'greylist' ? n : n + k), 0);
}

export function StatusPage({ api, session }: PageProps) {
  const [range, setRange] = useState('day');
  const [auto, setAuto] = useState(true);
  const every = auto ? REFRESH_MS : undefined;
  const stat = useAsync(() => api.stat(), [api], every);
  const health = useAsync(() => api.health(), [api], every);
  const r = RANGES.find((x) => x.id === range) ?? RANGES[1]!;
  const graph = useAsync(() => api.graph(r.type), [api, r.type], every);
  const errors = useAsync(() => (session.readOnly ? Promise.resolve(undefined) : api.errors()), [api, session.readOnly], every);

  const s = stat.data;
  const times = (s?.scan_times ?? []).filter((t): t is number => typeof t === 'number' && Number.isFinite(t));
  const avg = times.length ? times.reduce((a, b) => a + b, 0) / times.length : undefined;
  const series: Series[] = (graph.data ?? []).map((pts, i) => {
    const action = ACTIONS[i] ?? `series ${i}`;
    const cut = r.cutSeconds;
    const last = pts.length ? pts[pts.length - 1]!.x : 0;
    const points: GraphPoint[] = cut ? pts.filter((p) => p.x >= last - cut) : pts;
    return { label: action, cssVar: actionVar(action), points };
  });

  return (
    <section aria-labelledby="status-h">
      <div class="page-head">
        <h1 id="status-h">Status</h1>
        <label class="inline">
          <input type="checkbox" checked={auto} onChange={(e) => setAuto(e.currentTarget.checked)} /> refresh every {REFRESH_MS / 1000} s
        </label>
      </div>
      {stat.error && <Problem error={stat.error} what="the counters" />}
      {s && (
        <dl class="cards" data-testid="counters">
          <Card label="Scanned" value={fmtInt(s.scanned)} />
          <Card label="Spam" value={fmtInt(s.spam_count)} />
          <Card label="Ham" value={fmtInt(s.ham_count)} />
          <Card label="Learned" value={fmtInt(s.learned)} />
          <Card label="Avg scan time" value={avg === undefined ? '–' : `${(avg * 1000).toFixed(1)} ms`} />
          <Card label="Connections" value={fmtInt(s.connections)} />
          <Card label="Controller requests" value={fmtInt(s.control_connections)} />
          <Card label="Uptime" value={fmtDuration(s.uptime)} />
          <Card label="Version" value={s.version} />
          <Card label="Heap" value={fmtBytes(s.bytes_allocated)} />
        </dl>
      )}

      <div class="grid-2">
        <section class="panel" aria-labelledby="tp-h">
          <div class="panel-head">
            <h2 id="tp-h">Throughput</h2>
            <div role="group" aria-label="Time range" class="segmented">
              {RANGES.map((x) => (
                <button key={x.id} type="button" aria-pressed={x.id === range} onClick={() => setRange(x.id)}>
                  {x.label}
                </button>
              ))}
            </div>
          </div>
          {graph.error ? <Problem error={graph.error} what="the throughput graph" /> : <LineChart series={series} title={`Messages per second by action, last ${r.label.toLowerCase()}`} />}
        </section>
        <section class="panel" aria-labelledby="pie-h">
          <h2 id="pie-h">Actions</h2>
          {s && <PieChart title="Messages by action" slices={ACTIONS.map((a) => ({ label: a, value: s.actions[a] ?? 0, cssVar: actionVar(a) }))} />}
        </section>
      </div>

      <div class="grid-2">
        <section class="panel" aria-labelledby="workers-h">
          <h2 id="workers-h">Workers</h2>
          {health.error && <Problem error={health.error} what="worker and store health" />}
          {health.data && (
            <div class="scroll">
            <table data-testid="workers">
              <thead>
                <tr>
                  <th scope="col">Role</th>
                  <th scope="col">PID</th>
                  <th scope="col">State</th>
                  <th scope="col" class="num">Restarts</th>
                  <th scope="col" class="num">Scanned</th>
                  <th scope="col" class="num">Spam</th>
                  <th scope="col" class="num">In flight</th>
                  <th scope="col" class="num">Heap</th>
                  <th scope="col">Up since</th>
                </tr>
              </thead>
              <tbody>
                {health.data.workers.map((w, i) => (
                  <tr key={`${w.role}-${i}`}>
                    <td>{w.role}</td>
                    <td>{w.pid ?? '–'}</td>
                    <td>
                      <span class={`badge ${w.state === 'up' ? 'ok' : 'bad'}`}>{w.state}</span>
                    </td>
                    <td class="num">{w.restarts}</td>
                    <td class="num" data-testid="worker-scanned">{w.scanned ?? '–'}</td>
                    <td class="num">{w.actions ? spamOf(w.actions) : '–'}</td>
                    <td class="num">{w.inFlight ?? '–'}</td>
                    <td class="num">{w.heapUsed !== undefined ? fmtBytes(w.heapUsed) : '–'}</td>
                    <td>{w.startedAt ? fmtTime(w.startedAt / 1000) : '–'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            </div>
          )}
        </section>
        <section class="panel" aria-labelledby="stores-h">
          <h2 id="stores-h">Stores</h2>
          {health.data && (
            <table data-testid="stores">
              <thead>
                <tr>
                  <th scope="col">Store</th>
                  <th scope="col">Back end</th>
                  <th scope="col">Reachable</th>
                </tr>
              </thead>
              <tbody>
                {health.data.stores.map((st) => (
                  <tr key={st.store}>
                    <td>{st.store}</td>
                    <td>{st.backend}</td>
                    <td>
                      <span class={`badge ${st.ok ? 'ok' : 'bad'}`}>{st.ok ? `yes (${st.ms} ms)` : 'no'}</span>
                      {st.error && <span class="muted"> {st.error}</span>}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <h2>Learned</h2>
          {s && (s.statfiles?.length ? (
            <table>
              <thead>
                <tr>
                  <th scope="col">Class</th>
                  <th scope="col" class="num">Learns</th>
                  <th scope="col" class="num">Tokens</th>
                  <th scope="col" class="num">Users</th>
                </tr>
              </thead>
              <tbody>
                {s.statfiles.map((f) => (
                  <tr key={f.symbol}>
                    <td>{f.symbol}</td>
                    <td class="num">{fmtInt(f.revision)}</td>
                    <td class="num">{fmtInt(f.used)}</td>
                    <td class="num">{f.users}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p class="muted">No classifier statistics (no classifier, or its store is down).</p>
          ))}
          {s?.fuzzy_hashes && (
            <p>
              Fuzzy hashes: {Object.entries(s.fuzzy_hashes).map(([k, v]) => `${k} ${fmtInt(v)}`).join(', ')}
            </p>
          )}
        </section>
      </div>

      <section class="panel" aria-labelledby="errors-h">
        <h2 id="errors-h">Recent errors</h2>
        {session.readOnly ? (
          <p class="muted">The error ring needs the enable password.</p>
        ) : errors.error ? (
          <Problem error={errors.error} what="the error ring" />
        ) : errors.data && errors.data.length === 0 ? (
          <p class="muted">No errors.</p>
        ) : (
          <div class="scroll">
            <table data-testid="errors">
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Module</th>
                  <th scope="col">Message</th>
                </tr>
              </thead>
              <tbody>
                {(errors.data ?? []).slice(0, 50).map((e, i) => (
                  <tr key={i}>
                    <td class="nowrap">{fmtTime(e.ts)}</td>
                    <td>{e.module || e.type}</td>
                    <td class="wrap">{e.message}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </section>
  );
}

function Card({ label, value }: { label: string; value: string }) {
  return (
    <div class="card">
      <dt>{label}</dt>
      <dd>{value}</dd>
    </div>
  );
}
