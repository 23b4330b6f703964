// Runs every test file under test/ with node's test runner (Node 20 has no glob support for --test).
//
// Test scans use the shipped configuration, whose resolver is the machine's own: a DNS stub on
// loopback answers every query NXDOMAIN at once instead, so no test scan sends a query off the
// machine (MAILSIFT_DNS_NAMESERVER is the default resolver when a config names none; tests that
// need answers run their own DNS server from test/helpers/dns-server.ts and configure it).
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';

function collect(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...collect(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

/** A UDP DNS server that answers every query with NXDOMAIN (RCODE 3), echoing id and question. */
function startNxdomainStub() {
  const sock = dgram.createSocket('udp4');
  sock.on('message', (q, peer) => {
    if (q.length < 12) return;
    const r = Buffer.from(q);
    r[2] = 0x80 | (q[2] & 0x79); // QR=1, keep opcode and RD
    r[3] = 0x80 | 3; // RA=1, RCODE=NXDOMAIN
    r.writeUInt16BE(0, 6); // ANCOUNT
    r.writeUInt16BE(0, 8); // NSCOUNT
    r.writeUInt16BE(0, 10); // ARCOUNT (an EDNS OPT record, if any, is dropped with it)
    // Keep only the header and the question: find its end (name labels, then type and class).
    let off = 12;
    while (off < q.length && q[off] !== 0) off += q[off] + 1;
    const end = Math.min(q.length, off + 5);
    sock.send(r.subarray(0, end), peer.port, peer.address);
  });
  return new Promise((resolve) => sock.bind(0, '127.0.0.1', () => resolve(sock)));
}

const only = process.argv.slice(2);
const files = only.length ? only : collect('test');
const stub = await startNxdomainStub();
const env = { ...process.env, MAILSIFT_DNS_NAMESERVER: process.env.MAILSIFT_DNS_NAMESERVER ?? `127.0.0.1:${stub.address().port}` };
/** A test that hangs (a server that never answers, a handle left open) fails instead of stalling CI. */
const TEST_TIMEOUT_MS = 180_000;
/** The whole run takes ~4 minutes on 2 cores; past this something is stuck beyond one test. */
const RUN_TIMEOUT_MS = 25 * 60_000;
const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', `--test-timeout=${TEST_TIMEOUT_MS}`, ...files], { stdio: 'inherit', env });
const watchdog = setTimeout(() => {
  console.error(`run-tests: no result after ${RUN_TIMEOUT_MS / 60_000} minutes; stopping the test runner`);
  child.kill('SIGKILL');
}, RUN_TIMEOUT_MS);
child.on('exit', (code, signal) => {
  clearTimeout(watchdog);
  stub.close();
  process.exit(code ?? (signal ? 1 : 0));
});
