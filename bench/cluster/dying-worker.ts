// Reproduces what a client sees when a node:cluster worker is SIGKILLed while stalled (what the
// watchdog does), under each scheduling policy. Two workers serve a plain HTTP server on a
// shared port; one is sent a request that blocks its event loop; then fresh connections are
// opened one by one, and the stalled worker is killed. Under round-robin the primary has already
// handed the stalled worker one of those connections (it waits for an acknowledgement the
// worker never sends); when the worker dies Node 20 closes the IPC channel without closing the
// primary's copy of that socket (internal/child_process.js: the EOF path calls disconnect(),
// which defers _disconnect() while a handle awaits its ACK), so the client waits forever.
//
//   npx tsx bench/cluster/dying-worker.ts rr      # one connection hangs
//   npx tsx bench/cluster/dying-worker.ts none    # none does
import cluster from 'node:cluster';
import http from 'node:http';
import net from 'node:net';

const policy = process.argv[2] === 'none' ? cluster.SCHED_NONE : cluster.SCHED_RR;
const CONNECTIONS = 6;
/** A connection with no reply after this long is counted as hung (a reply takes milliseconds). */
const HANG_MS = 8_000;

if (cluster.isWorker) {
  http
    .createServer((req, res) => {
      if (req.url === '/spin') for (;;);
      res.end(`${process.pid}\n`);
    })
    .listen(Number(process.env.PORT), '127.0.0.1', () => process.send!('ready'));
} else {
  cluster.schedulingPolicy = policy;
  const port = await new Promise<number>((r) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => r(p));
    });
  });
  const workers = [cluster.fork({ PORT: String(port) }), cluster.fork({ PORT: String(port) })];
  await Promise.all(workers.map((w) => new Promise((r) => w.once('message', r))));
  const pids = new Set(workers.map((w) => w.process.pid));

  const get = (path: string): Promise<string> =>
    new Promise((resolve) => {
      const req = http.get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve(`answered by ${body.trim()}`));
      });
      req.setTimeout(HANG_MS, () => {
        resolve('HUNG (no reply, connection still open)');
        req.destroy();
      });
      req.on('error', (err: NodeJS.ErrnoException) => resolve(`connection error ${err.code ?? err.message}`));
    });

  // Find which worker takes /spin: under round-robin the first; under none whichever accepts.
  void get('/spin');
  await new Promise((r) => setTimeout(r, 500));
  const outcomes = Array.from({ length: CONNECTIONS }, () => '');
  const pending: Promise<void>[] = [];
  for (let i = 0; i < CONNECTIONS; i++) {
    pending.push(get('/').then((o) => void (outcomes[i] = o)));
    await new Promise((r) => setTimeout(r, 100));
  }
  // The spinning worker is the one whose pid never answers.
  await new Promise((r) => setTimeout(r, 500));
  const answering = new Set(outcomes.filter((o) => o.startsWith('answered')).map((o) => Number(o.split(' ').pop())));
  const stalled = workers.find((w) => !answering.has(w.process.pid!))!;
  stalled.process.kill('SIGKILL');
  await Promise.all(pending);
  console.log(`policy ${policy === cluster.SCHED_RR ? 'round-robin' : 'none'}; workers ${[...pids].join(', ')}; killed the stalled worker ${stalled.process.pid}`);
  outcomes.forEach((o, i) => console.log(`  connection ${i + 1}: ${o}`));
  for (const w of workers) w.process.kill('SIGKILL');
  process.exit(0);
}
