// How node:cluster's scheduling policy spreads scans over 2 normal workers: K keep-alive
// clients scan the development corpus for a few seconds against `mailsift serve --workers 2`
// under round-robin (the primary accepts and hands out connections), under none (the workers
// accept from the shared socket themselves) and under none with UV_TCP_SINGLE_ACCEPT=1 (libuv
// yields after each accept, so one waking worker does not take a whole burst). Reports throughput, each worker's share of
// the CPU time spent (the scans it did) and of the client connections it holds.
// Two ways to open the clients: all at once at the start ("burst", the workers idle) and one
// every STAGGER_MS while the others already scan ("staggered", as an MTA's pool grows).
//
//   TRIALS=3 POLICIES=rr,none,none+single npx tsx bench/cluster/sched-load.ts [seconds=8] [clients=8,16,64]
// Short runs on purpose: the machine is shared; compare the policies within one run.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { loadCorpus, shuffled } from '../corpus.js';
import { processTree, treeCpuMs } from '../proc-stats.js';
import { startMailsift } from '../servers.js';

const REPO = new URL('../../', import.meta.url).pathname;
const SECONDS = Number(process.argv[2] ?? 8);
const CLIENTS = (process.argv[3] ?? '8,16,64').split(',').map(Number);
const STAGGER_MS = 50;
const TRIALS = Number(process.env.TRIALS ?? 3);

const role = (pid: number): string | undefined => {
  try {
    return /(?:^|\0)MAILSIFT_WORKER_ROLE=([a-z]+)/.exec(readFileSync(`/proc/${pid}/environ`, 'latin1'))?.[1];
  } catch {
    return undefined;
  }
};

/** Established connections on the scan port held by each process (from `ss -tnp`). */
function connectionsByPid(port: number): Map<number, number> {
  const out = new Map<number, number>();
  const text = execFileSync('ss', ['-tnpH', 'state', 'established', `( sport = :${port} )`]).toString();
  for (const m of text.matchAll(/pid=(\d+)/g)) out.set(Number(m[1]), (out.get(Number(m[1])) ?? 0) + 1);
  return out;
}

type Policy = 'rr' | 'none' | 'none+single';

interface Trial {
  rate: number;
  errors: number;
  /** Each normal worker's share of the CPU time the normal workers spent, in %. */
  cpu: number[];
  held: number[];
}

async function trial(scan: string, normals: number[], clients: number, pattern: 'burst' | 'staggered', messages: Buffer[]): Promise<Trial> {
  const [host, portText] = scan.split(':') as [string, string];
  const port = Number(portText);
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  const post = (body: Buffer): Promise<number> =>
    new Promise((resolve, reject) => {
      const req = http.request({ host, port, method: 'POST', path: '/checkv2', agent, headers: { 'Content-Length': body.length } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(body);
    });
  const cpu0 = new Map(normals.map((p) => [p, treeCpuMs([p])]));
  const started = Date.now();
  const end = started + SECONDS * 1000 + (pattern === 'staggered' ? clients * STAGGER_MS : 0);
  let done = 0;
  let errors = 0;
  let conns = new Map<number, number>();
  const loop = async (k: number) => {
    if (pattern === 'staggered') await new Promise((r) => setTimeout(r, k * STAGGER_MS));
    let i = k;
    while (Date.now() < end) {
      try {
        if ((await post(messages[i++ % messages.length]!)) === 200) done++;
        else errors++;
      } catch {
        errors++;
      }
    }
  };
  // Sampled once every client has connected.
  const sampler = setTimeout(() => (conns = connectionsByPid(port)), (pattern === 'staggered' ? clients * STAGGER_MS : 0) + (SECONDS * 1000) / 2);
  await Promise.all(Array.from({ length: clients }, (_, k) => loop(k)));
  clearTimeout(sampler);
  const secs = (Date.now() - started) / 1000;
  agent.destroy();
  const cpu = normals.map((p) => treeCpuMs([p]) - cpu0.get(p)!);
  const total = cpu.reduce((a, b) => a + b, 0) || 1;
  // Let the server see the clients go before the next trial opens its own.
  await new Promise((r) => setTimeout(r, 500));
  return { rate: done / secs, errors, cpu: cpu.map((c) => Math.round((100 * c) / total)), held: normals.map((p) => conns.get(p) ?? 0) };
}

async function policyRuns(policy: Policy, messages: Buffer[]): Promise<string[]> {
  process.env.NODE_CLUSTER_SCHED_POLICY = policy === 'rr' ? 'rr' : 'none';
  if (policy === 'none+single') process.env.UV_TCP_SINGLE_ACCEPT = '1';
  else delete process.env.UV_TCP_SINGLE_ACCEPT;
  const srv = await startMailsift(REPO, 2);
  const out: string[] = [];
  try {
    const normals = processTree(srv.pids()).filter((p) => role(p) === 'normal');
    for (const clients of CLIENTS) {
      for (const pattern of ['burst', 'staggered'] as const) {
        const trials: Trial[] = [];
        for (let t = 0; t < TRIALS; t++) trials.push(await trial(srv.scan, normals, clients, pattern, messages));
        const rate = trials.reduce((a, t) => a + t.rate, 0) / trials.length;
        const worst = Math.max(...trials.map((t) => Math.max(...t.cpu)));
        out.push(
          `${policy.padEnd(11)} ${pattern.padEnd(9)} ${String(clients).padStart(3)} clients: ${rate.toFixed(0).padStart(4)} scans/s (mean of ${TRIALS}), ` +
            `${trials.reduce((a, t) => a + t.errors, 0)} errors; CPU shares ${trials.map((t) => t.cpu.join('/')).join(', ')} (worst ${worst}%); connections ${trials.map((t) => t.held.join('/')).join(', ')}`,
        );
        console.log(out.at(-1));
      }
    }
  } finally {
    await srv.stop();
  }
  return out;
}

const messages = shuffled(await loadCorpus(REPO, 300), 7).map((m) => m.bytes);
const lines: string[] = [];
const POLICIES = (process.env.POLICIES ?? 'rr,none').split(',') as Policy[];
for (const policy of POLICIES) lines.push(...(await policyRuns(policy, messages)));
console.log('\n' + lines.join('\n'));
