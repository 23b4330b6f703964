// Memory and CPU of a zstd-compressed request against the same message sent plain (a fuzz
// finding's follow-up: bench/fuzz/findings/zstd-memory-rle-bomb.bin). Each case runs in a fresh worker
// process (a normal worker on the shipped conf/), so the peak RSS (VmHWM) of that process
// after one request, minus its peak after start-up and a warm-up scan, is what the request
// cost; CPU is the process's utime + stime over the request. `decode` measures the decoder
// alone, in a fresh process too.
//
//   npx tsx bench/http/zstd-memory.bench.ts            # all cases, 3 runs each
//   npx tsx bench/http/zstd-memory.bench.ts decode     # the decoder alone
//   CONC=4 npx tsx bench/http/zstd-memory.bench.ts     # four requests in flight at once
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';

const FINDING = new URL('../fuzz/findings/zstd-memory-rle-bomb.bin', import.meta.url);
const RUNS = Number(process.env.RUNS ?? 3);
/** Requests sent at once to the one worker (CONC=4: four bombs in flight together). */
const CONC = Number(process.env.CONC ?? 1);

function procStatus(pid: number): { hwmKiB: number; rssKiB: number; cpuMs: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'latin1');
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime + stime in clock ticks (100 per second on Linux).
  return { hwmKiB: kib('VmHWM'), rssKiB: kib('VmRSS'), cpuMs: (Number(f[11]) + Number(f[12])) * 10 };
}

/** The bomb's request: its header block and its body (one zstd frame). */
function bomb(): { head: string; body: Buffer } {
  const raw = readFileSync(FINDING);
  const sep = raw.indexOf('\r\n\r\n');
  return { head: raw.subarray(0, sep).toString('latin1'), body: raw.subarray(sep + 4) };
}

function send(port: number, bytes: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ port, host: '127.0.0.1' });
    const parts: Buffer[] = [];
    sock.on('data', (d) => parts.push(d));
    sock.on('end', () => resolve(Buffer.concat(parts).subarray(0, 80).toString('latin1').split('\r\n')[0]!));
    sock.on('error', reject);
    sock.write(bytes);
  });
}

const request = (body: Buffer, headers: string[]) =>
  Buffer.concat([Buffer.from(`POST /checkv2 HTTP/1.1\r\nConnection: close\r\n${headers.map((h) => `${h}\r\n`).join('')}Content-Length: ${body.length}\r\n\r\n`), body]);

async function child(mode: string): Promise<void> {
  if (mode === 'decode') {
    const { zstdDecompressBounded } = await import('../../src/http/zstd.js');
    const { body } = bomb();
    const before = procStatus(process.pid);
    const c0 = process.cpuUsage();
    const out = zstdDecompressBounded(body, 50 * 1024 * 1024);
    const c = process.cpuUsage(c0);
    const after = procStatus(process.pid);
    process.send!({ bytes: out.length, peakMiB: (after.hwmKiB - before.hwmKiB) / 1024, cpuMs: (c.user + c.system) / 1000 });
    return;
  }
  const { loadConfig } = await import('../../src/config/load.js');
  const { createEngine } = await import('../../src/engine/index.js');
  const { builtinModules } = await import('../../src/modules/index.js');
  const { createLogger } = await import('../../src/observability/log.js');
  const { startNormalWorker } = await import('../../src/workers/normal.js');
  const cfg = await loadConfig('conf');
  const log = createLogger({ level: 'silent' }).child('normal');
  const scanner = await createEngine(cfg.engine, builtinModules, { log });
  const w = await startNormalWorker({ host: '127.0.0.1', port: 0, scanner, maxMessage: cfg.workers.normal.maxMessage, log });
  process.send!({ port: w.port });
}

async function measure(mode: 'zstd' | 'plain', runs: number): Promise<void> {
  const { head, body } = bomb();
  const headers = head.split('\r\n').slice(1).filter((h) => !/^content-length:/i.test(h));
  const { zstdDecompressBounded } = await import('../../src/http/zstd.js');
  const plain = zstdDecompressBounded(body, 50 * 1024 * 1024);
  const rows: string[] = [];
  for (let i = 0; i < runs; i++) {
    const p = fork(new URL(import.meta.url).pathname, ['child', 'worker'], { execArgv: ['--import', 'tsx'] });
    const { port } = await new Promise<{ port: number }>((r) => p.once('message', (m) => r(m as { port: number })));
    await send(port, request(Buffer.from('From: a@example.com\r\nSubject: warm\r\n\r\nhello\r\n'), []));
    const before = procStatus(p.pid!);
    const bytes = mode === 'zstd' ? request(body, headers) : request(plain, []);
    const statuses = await Promise.all(Array.from({ length: CONC }, () => send(port, bytes)));
    const after = procStatus(p.pid!);
    rows.push(`${mode} x${CONC}: ${[...new Set(statuses)].join(', ')}; request ${mode === 'zstd' ? body.length : plain.length} bytes; peak RSS +${((after.hwmKiB - before.hwmKiB) / 1024).toFixed(0)} MiB; CPU ${after.cpuMs - before.cpuMs} ms`);
    p.kill('SIGKILL');
  }
  for (const r of rows) console.log(r);
}

async function decodeOnly(runs: number): Promise<void> {
  for (let i = 0; i < runs; i++) {
    const p = fork(new URL(import.meta.url).pathname, ['child', 'decode'], { execArgv: ['--import', 'tsx'] });
    const m = await new Promise<{ bytes: number; peakMiB: number; cpuMs: number }>((r) => p.once('message', (x) => r(x as never)));
    console.log(`decode: ${m.bytes} bytes out; peak RSS +${m.peakMiB.toFixed(0)} MiB; CPU ${m.cpuMs.toFixed(0)} ms`);
    p.kill('SIGKILL');
  }
}

if (process.argv[2] === 'child') await child(process.argv[3]!);
else if (process.argv[2] === 'decode') await decodeOnly(RUNS);
else {
  await decodeOnly(RUNS);
  await measure('zstd', RUNS);
  await measure('plain', RUNS);
}
