// Child process for stats-ipc.test.ts: a "worker" that logs an error line, counts scans and
// records their history rows through the real IPC sink, then reads the aggregate back through
// the IPC view.

import { createLogger } from '../../src/observability/log.js';
import { setErrorSink } from '../../src/observability/error-ring.js';
import { ipcStatsSink, ipcStatsView } from '../../src/observability/stats-ipc.js';
import { StatsRecorder } from '../../src/observability/stats-recorder.js';
import type { ScanResult } from '../../src/plugin-api/index.js';

const sink = ipcStatsSink();
setErrorSink((e) => sink.error(e), 'normal');
const log = createLogger({ level: 'error', destination: { write: () => undefined } }).child('child-module');
const recorder = new StatsRecorder(sink);
const result = { action: 'reject', symbols: [{ name: 'GTUBE', score: 15, metricScore: 0, groups: [] }] } as unknown as ScanResult;
log.error(`worker ${process.pid} failed something`);
recorder.scan(result, 0.25);
recorder.scan({ ...result, action: 'no action', symbols: [] } as ScanResult, 0.5);
// More rows than one IPC batch holds, so both the size and the timer send them.
for (let i = 0; i < 70; i++) recorder.history({ unix_time: 1_800_000_000 + i, action: i % 2 ? 'reject' : 'no action', 'message-id': `ipc-${i}` });
recorder.flush();
await sink.settled();
const view = ipcStatsView();
const snap = await view.snapshot();
process.send!({ done: true, scanned: snap.state.scanned, errors: (await view.errors()).length });
process.disconnect();
