// In-process CPU of whole scans on the development split (easy-ham-1, hard-ham-1, spam-1), and
// the verdicts they give. Every DNS lookup is answered NXDOMAIN with an SOA of TTL 0 by a stub
// in a child process (its CPU is not counted), so each pass does the DNS work of a fresh one.
// Run it with tsx (npx tsx scripts/scan-cpu.ts …; tsx adds a __name wrapper to every function,
// which shows in profiles), or from a plain transform of the tree, which is what the server runs:
//   node_modules/.bin/esbuild $(find src -name '*.ts' ! -name '*.d.ts') bench/corpus.ts bench/recorded-envelope.ts scripts/scan-cpu.ts \
//     --outdir=.tmp/b --outbase=. --format=esm --platform=node --target=node20 && cp -r conf .tmp/b/ \
//     && ln -s "$PWD/node_modules" .tmp/b/node_modules
// (build the commit before a change into .tmp/a the same way, then `node .tmp/a/scripts/scan-cpu.js ab .tmp/b`).
//   node <build>/scripts/scan-cpu.js dump /tmp/verdicts.json       action + symbols (2 dp) per message
//   node <build>/scripts/scan-cpu.js cpu [--rounds 5] [--concurrency 8] [--limit n] [--prof f.cpuprofile]
//     (--prof: the measured rounds only; summarise with scripts/cpu-profile-summary.mjs; SEND_CPU=1: CPU inside UDP sends)
//   node <build>/scripts/scan-cpu.js cpu --rounds 1 --alloc f.heapprofile
//     (every allocation sampled over the measured rounds, the young garbage included; summarise with
//     scripts/alloc-profile-summary.mjs: the bytes each function allocates, which is what the
//     young-generation collections cost)
//   node <build>/scripts/scan-cpu.js ab <other build> [--rounds 10] [--limit 600]
//   node <build>/scripts/scan-cpu.js slowest [--rounds 5] [--top 25]
//     each message alone, its least CPU over the rounds: the messages that cost most
//   node <build>/scripts/scan-cpu.js dns-ab <other build> [--rounds 20] [--limit 400]
//     the DNS lookup path alone (each build's resolver and task DNS API, no engine): per
//     "message" 36 awaited A lookups six at a time and 4 through the node:dns-shaped adapter, all
//     NXDOMAIN from the stub; the paired CPU of 40 lookups, send and receive included. Much less
//     noisy than `ab` for a change to src/net. Run it both ways (each build running the script once):
//     the side that runs it came out up to about 5 % cheaper whatever it held; take the mean.
//   --envelope recorded (any mode): each scan gets the envelope the corpus MTA recorded (sender
//     IP, HELO, reverse name, Return-Path, recipient; bench/recorded-envelope.ts), as
//     `npm run bench -- --envelope recorded` sends it: about 40 lookups a message instead of 16.
//     Add bench/recorded-envelope.ts to the esbuild line; in `ab` the envelopes come from the
//     build that runs the script, so the other build needs no such module.
//   --data <dir> (any mode): the stores' data directory instead of a scratch one, e.g. a copy of
//     the data_dir of a trained server (its mailsift.sqlite) to measure scans with Bayes at work;
//     it is left in place afterwards.
//   --log json|text (any mode): each scan also writes its log line through the build's own
//     logger to stdout, as a worker does (the report then goes to stderr); point stdout at a
//     pipe (`| cat >/dev/null`) or a file to measure what the lines cost there.
// `ab` loads both builds into one process and alternates rounds between their engines, so a
// machine whose load drifts (shared cores) slows both sides alike; it prints each side's median
// and the median of the paired differences.
import { spawn } from 'node:child_process';
import { Session } from 'node:inspector/promises';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = join(dirname(fileURLToPath(import.meta.url)), '..');
const quiet = { debug() {}, info() {}, warn() {}, error() {}, child() { return quiet; } };
const STUB = `
import dgram from 'node:dgram';
const sock = dgram.createSocket('udp4');
const soa = Buffer.from([0,0,6,0,1,0,0,0,0,0,22,0,0,0,0,0,1,0,0,0,60,0,0,0,60,0,0,2,88,0,0,0,0]);
sock.on('message', (q, r) => {
  if (q.length < 12) return;
  let i = 12;
  while (i < q.length && q[i] !== 0) i += q[i] + 1;
  i += 5;
  const head = Buffer.from(q.subarray(0, 12));
  head[2] = 0x84 | (q[2] & 1); head[3] = 3;
  head.writeUInt16BE(1, 4); head.writeUInt16BE(0, 6); head.writeUInt16BE(1, 8); head.writeUInt16BE(0, 10);
  sock.send(Buffer.concat([head, q.subarray(12, i), soa]), r.port, r.address);
});
sock.bind(0, '127.0.0.1', () => process.stdout.write(sock.address().port + '\\n'));
`;

async function startStub(): Promise<{ port: number; stop(): void }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', STUB], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((res) => child.stdout.once('data', (d: Buffer) => res(Number(d.toString().trim()))));
  return { port, stop: () => child.kill() };
}

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
}

/** `--data <dir>`: the stores' data directory (kept); undefined: a scratch one per side, removed. */
const dataDir = ((): string | undefined => {
  const i = process.argv.indexOf('--data');
  return i > 0 ? resolve(process.argv[i + 1]!) : undefined;
})();

/** `--log json|text`: scan lines to stdout through each build's logger; undefined: none. */
const logFormat = ((): 'json' | 'text' | undefined => {
  const i = process.argv.indexOf('--log');
  if (i < 0) return undefined;
  const f = process.argv[i + 1];
  if (f !== 'json' && f !== 'text') throw new Error('--log takes json or text');
  return f;
})();
/** `--envelope recorded`: the envelope the corpus MTA recorded; none otherwise. */
const envelopeKind = ((): 'none' | 'recorded' => {
  const i = process.argv.indexOf('--envelope');
  if (i < 0) return 'none';
  const k = process.argv[i + 1];
  if (k !== 'none' && k !== 'recorded') throw new Error('--envelope takes none or recorded');
  return k;
})();
/** The report: stderr when stdout carries the scan lines. */
const say = (line: string): void => void (logFormat ? process.stderr.write(`${line}\n`) : console.log(line));

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Verdict { action: string; symbols: string[] }
interface Side { name: string; pass(): Promise<Verdict[]>; scanOne(i: number): Promise<void>; close(): Promise<void> }
/** One message's envelope as recorded (a ScanMeta of the running build); each scan gets a copy, since the engine fills it in. */
interface Envelope { rcpt: string[]; flags: Set<unknown> }

/** An engine of the build at `root` (every built-in module, stores in a scratch directory). */
async function side(root: string, dnsPort: number, messages: Buffer[], concurrency: number, envelopes?: Envelope[]): Promise<Side> {
  // The build's own modules, so two builds can be compared in one process.
  const imp = (p: string): Promise<any> => import(pathToFileURL(join(root, p)).href); // eslint-disable-line @typescript-eslint/no-explicit-any -- modules of another build
  const [{ loadConfig }, { createEngine }, { createMapRegistry }, { builtinModules }, { emptyMeta }, { createNetServices }, { openStores }, { createLogger }, { createScanLogger }] = await Promise.all([
    imp('src/config/load.js'), imp('src/engine/index.js'), imp('src/maps/index.js'), imp('src/modules/index.js'),
    imp('src/plugin-api/index.js'), imp('src/net/index.js'), imp('src/storage/index.js'),
    imp('src/observability/log.js'), imp('src/observability/scan-log.js'),
  ]);
  // As a worker writes it: the logger `serve` makes (a build that predates an option ignores
  // it), its `task` child, the configured format.
  const scanLine: ((input: unknown) => void) | undefined = logFormat
    ? createScanLogger(createLogger({ format: logFormat, buffered: true }).child('task'), logFormat, 'info')
    : undefined;
  const data = dataDir ?? mkdtempSync(join(tmpdir(), 'scan-cpu-'));
  const cfg = await loadConfig(join(root, 'conf'));
  cfg.dataDir = data;
  const stores = await openStores(cfg, quiet);
  const net = createNetServices({ dns: { ...cfg.engine.dns, servers: [`127.0.0.1:${dnsPort}`], retransmits: 0 } });
  const maps = createMapRegistry({ baseDir: cfg.dir, log: quiet });
  const engine = await createEngine(cfg.engine, builtinModules, { stores, log: quiet, net, maps });
  const metaOf = (i: number): unknown => {
    const env = envelopes?.[i];
    return env ? { ...env, rcpt: [...env.rcpt], flags: new Set(env.flags) } : emptyMeta();
  };
  return {
    name: root,
    async pass() {
      const out = new Array<Verdict>(messages.length);
      let next = 0;
      const lane = async (): Promise<void> => {
        while (next < messages.length) {
          const i = next++;
          const meta = metaOf(i);
          const t0 = performance.now();
          const r = await engine.scan(messages[i]!, meta);
          scanLine?.({ result: r, meta, message: messages[i]!, seconds: (performance.now() - t0) / 1000 });
          out[i] = { action: r.action, symbols: r.symbols.map((s: { name: string; score: number }) => `${s.name}:${s.score.toFixed(2)}`).sort() };
        }
      };
      await Promise.all(Array.from({ length: concurrency }, lane));
      return out;
    },
    async scanOne(i) {
      await engine.scan(messages[i]!, metaOf(i));
    },
    async close() {
      await net.close();
      await stores.close();
      maps.close();
      if (!dataDir) rmSync(data, { recursive: true, force: true });
    },
  };
}

/** With SEND_CPU=1: the CPU spent inside dgram sends, to see what the DNS datagrams cost alone. */
const sendCpu = { n: 0, us: 0 };
if (process.env['SEND_CPU']) {
  const dgram = await import('node:dgram');
  const orig = dgram.Socket.prototype.send;
  dgram.Socket.prototype.send = function (this: unknown, ...args: unknown[]) {
    const c0 = process.cpuUsage();
    try { return (orig as (...a: unknown[]) => void).apply(this, args); } finally {
      const c = process.cpuUsage(c0);
      sendCpu.n++;
      sendCpu.us += c.user + c.system;
    }
  } as typeof orig;
}

async function cpuOf(s: Side, n: number): Promise<number> {
  sendCpu.n = 0; sendCpu.us = 0;
  const c0 = process.cpuUsage();
  await s.pass();
  const c = process.cpuUsage(c0);
  if (sendCpu.n > 0) say(`  ${s.name}: ${(sendCpu.n / n).toFixed(1)} sends/msg, ${(sendCpu.us / sendCpu.n).toFixed(1)} µs CPU each, ${(sendCpu.us / 1000 / n).toFixed(3)} ms/msg`);
  return (c.user + c.system) / 1000 / n;
}

/**
 * `slowest`: each message scanned alone, `rounds` times after a warm-up pass; per message the
 * least CPU of its rounds (a collection or a JIT pause lands on one round, not on all), the
 * `top` most expensive printed with their share of the whole.
 */
async function slowest(s: Side, corpus: ReadonlyArray<{ name: string; bytes: Buffer }>, rounds: number, top: number): Promise<void> {
  await s.pass();
  const least = new Array<number>(corpus.length).fill(Infinity);
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < corpus.length; i++) {
      const c0 = process.cpuUsage();
      await s.scanOne(i);
      const c = process.cpuUsage(c0);
      least[i] = Math.min(least[i]!, (c.user + c.system) / 1000);
    }
  }
  const total = least.reduce((a, b) => a + b, 0);
  say(`${corpus.length} messages, least CPU of ${rounds} rounds each: ${total.toFixed(0)} ms in all, ${(total / corpus.length).toFixed(3)} ms a message`);
  const order = least.map((ms, i) => ({ ms, i })).sort((a, b) => b.ms - a.ms).slice(0, top);
  for (const { ms, i } of order) say(`  ${ms.toFixed(2).padStart(7)} ms  ${(100 * ms / total).toFixed(2).padStart(5)} %  ${String(corpus[i]!.bytes.length).padStart(7)} bytes  ${corpus[i]!.name}`);
}

/** `dns-ab`: one build's DNS lookup path (see the header), run `n` "messages" over 8 lanes. */
async function dnsSide(root: string, dnsPort: number): Promise<{ name: string; pass(n: number): Promise<void> }> {
  const imp = (p: string): Promise<any> => import(pathToFileURL(join(root, p)).href); // eslint-disable-line @typescript-eslint/no-explicit-any -- modules of another build
  const [{ DnsResolver }, { TaskDnsImpl }] = await Promise.all([imp('src/net/dns-resolver.js'), imp('src/net/task-dns.js')]);
  const resolver = new DnsResolver({ servers: [`127.0.0.1:${dnsPort}`], retransmits: 0, timeout: 2 });
  let seq = 0;
  const message = async (): Promise<void> => {
    const scope = {
      signal: new AbortController().signal, remainingMs: () => 10_000, ended: false, resolver, redis: undefined,
      dnsMaxRequests: 1_000_000, log: quiet, begin: () => ({ run(fn: () => void) { fn(); }, end() {} }), requireCoro() {},
    };
    const dns = new TaskDnsImpl(scope);
    for (let b = 0; b < 6; b++) {
      const batch: Array<Promise<unknown>> = [];
      for (let k = 0; k < 6; k++) batch.push(dns.a(`${seq++ % 100_000}.${k}.list.example.org`));
      await Promise.all(batch);
    }
    for (let k = 0; k < 4; k++) await dns.nodeResolver(`${seq++ % 100_000}.spf.example.com`, 'TXT').catch(() => undefined);
  };
  return {
    name: root,
    async pass(n) {
      let next = 0;
      await Promise.all(Array.from({ length: 8 }, async () => { while (next++ < n) await message(); }));
    },
  };
}

async function dnsAb(other: string, dnsPort: number): Promise<void> {
  const [a, b] = [await dnsSide(here, dnsPort), await dnsSide(resolve(other), dnsPort)];
  const n = arg('--limit', 400), rounds = arg('--rounds', 20);
  await a.pass(n);
  await b.pass(n);
  const cpu = async (s: { pass(n: number): Promise<void> }): Promise<number> => {
    const c0 = process.cpuUsage();
    await s.pass(n);
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / n;
  };
  const xa: number[] = [], xb: number[] = [], diff: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const [ca, cb] = r % 2 === 0 ? [await cpu(a), await cpu(b)] : [await cpu(b), await cpu(a)].reverse() as [number, number];
    xa.push(ca); xb.push(cb); diff.push(cb - ca);
  }
  say(`A ${a.name}: median ${median(xa).toFixed(1)} µs CPU per 40 lookups`);
  say(`B ${b.name}: median ${median(xb).toFixed(1)} µs CPU per 40 lookups`);
  say(`B − A: median ${median(diff).toFixed(1)} µs (${((100 * median(diff)) / median(xa)).toFixed(1)} %), ${rounds} rounds of ${n}`);
}

async function main(): Promise<void> {
  const mode = process.argv[2] ?? 'cpu';
  if (mode === 'dns-ab') {
    const stub = await startStub();
    try { await dnsAb(process.argv[3]!, stub.port); } finally { stub.stop(); }
    return;
  }
  const { loadCorpus } = await import(pathToFileURL(join(here, 'bench/corpus.js')).href);
  const limit = arg('--limit', mode === 'ab' ? 600 : 0);
  const corpus: Array<{ name: string; bytes: Buffer }> = await loadCorpus(here, limit > 0 ? limit : undefined);
  const messages = corpus.map((m) => m.bytes);
  const conc = arg('--concurrency', 8);
  const envelopes: Envelope[] | undefined = envelopeKind === 'recorded'
    ? await import(pathToFileURL(join(here, 'bench/recorded-envelope.js')).href).then(({ recordedEnvelope }) => messages.map((m) => recordedEnvelope(m) as Envelope))
    : undefined;
  const stub = await startStub();
  const sides: Side[] = [];
  try {
    const a = await side(here, stub.port, messages, conc, envelopes);
    sides.push(a);
    if (mode === 'dump') {
      const out = await a.pass();
      const file = process.argv[3] ?? '/tmp/verdicts.json';
      writeFileSync(file, JSON.stringify(Object.fromEntries(corpus.map((m, i) => [m.name, out[i]]))));
      say(`${corpus.length} verdicts written to ${file}`);
      return;
    }
    if (mode === 'slowest') {
      await slowest(a, corpus, arg('--rounds', 5), arg('--top', 25));
      return;
    }
    if (mode === 'ab') {
      const b = await side(resolve(process.argv[3]!), stub.port, messages, conc, envelopes);
      sides.push(b);
      await a.pass();
      await b.pass();
      const rounds = arg('--rounds', 10);
      const xa: number[] = [], xb: number[] = [], diff: number[] = [];
      for (let r = 0; r < rounds; r++) {
        // Alternate which side goes first, so neither always runs after the other's garbage.
        const [ca, cb] = r % 2 === 0 ? [await cpuOf(a, messages.length), await cpuOf(b, messages.length)] : [await cpuOf(b, messages.length), await cpuOf(a, messages.length)].reverse() as [number, number];
        xa.push(ca); xb.push(cb); diff.push(cb - ca);
        say(`round ${r + 1}: A ${ca.toFixed(3)}  B ${cb.toFixed(3)} ms CPU/msg`);
      }
      say(`A ${a.name}: median ${median(xa).toFixed(3)} ms CPU/msg`);
      say(`B ${b.name}: median ${median(xb).toFixed(3)} ms CPU/msg`);
      say(`B − A: median ${median(diff).toFixed(3)} ms/msg (${((100 * median(diff)) / median(xa)).toFixed(1)} %), ${rounds} rounds of ${messages.length} messages, concurrency ${conc}, envelope ${envelopeKind}`);
      return;
    }
    await a.pass(); // warm-up: JIT, lazy setup
    const rounds = arg('--rounds', 5);
    const profAt = process.argv.indexOf('--prof');
    const allocAt = process.argv.indexOf('--alloc');
    const session = profAt > 0 || allocAt > 0 ? new Session() : undefined;
    if (session) session.connect();
    if (session && profAt > 0) {
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 250 });
      await session.post('Profiler.start');
    }
    if (session && allocAt > 0) {
      // One sample per 16 KiB allocated on average; objects a collection freed stay in the profile.
      await session.post('HeapProfiler.enable');
      await session.post('HeapProfiler.startSampling', { samplingInterval: 16384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    }
    const per: number[] = [];
    for (let r = 0; r < rounds; r++) {
      per.push(await cpuOf(a, messages.length));
      say(`round ${r + 1}: ${per.at(-1)!.toFixed(3)} ms CPU/msg`);
    }
    if (session && profAt > 0) {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(process.argv[profAt + 1]!, JSON.stringify(profile));
    }
    if (session && allocAt > 0) {
      const { profile } = await session.post('HeapProfiler.stopSampling');
      writeFileSync(process.argv[allocAt + 1]!, JSON.stringify(profile));
    }
    say(`median ${median(per).toFixed(3)} ms CPU/msg over ${rounds} rounds of ${messages.length} messages, concurrency ${conc}, envelope ${envelopeKind}`);
  } finally {
    for (const s of sides) await s.close();
    stub.stop();
  }
}

await main();
