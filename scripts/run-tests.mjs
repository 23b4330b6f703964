// Runs every test file under test/ with node's test runner (Node 20 has no glob support for --test).
//
// Test scans use the shipped configuration, whose resolver is the machine's own: a DNS stub on
// loopback answers every query NXDOMAIN at once instead, so no test scan sends a query off the
// machine (MAILSIFT_DNS_NAMESERVER is the default resolver when a config names none; tests that
// need answers run their own DNS server from test/helpers/dns-server.ts and configure it).
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';

const FAILED_FILES_REPORTER = fileURLToPath(new URL('./failed-files-reporter.mjs', import.meta.url));
const UNKNOWN_FILE = '(unknown file)';

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
/** The whole run takes 10–15 minutes on 2 cores; past this something is stuck beyond one test. */
const RUN_TIMEOUT_MS = 45 * 60_000;
/**
 * Files that failed beside another file are run once more, alone. Many tests start real servers
 * with several processes and hold them to deadlines; two such files at once on a loaded 2-core
 * machine can miss a deadline that the code under test meets. A file that fails alone fails the
 * run; more failed files than this is no scheduling accident, and they are not run again.
 */
const MAX_FILES_RUN_AGAIN = 6;
const RETRY_TIMEOUT_MS = 20 * 60_000;

/** Runs node's test runner on `list`; resolves to its exit code and the files with a failed test. */
function runTests(list, concurrency, timeoutMs) {
  const failedLog = join(mkdtempSync(join(tmpdir(), 'run-tests-')), 'failed-files');
  const args = [
    '--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, `--test-timeout=${TEST_TIMEOUT_MS}`,
    '--test-reporter=tap', '--test-reporter-destination=stdout',
    `--test-reporter=${FAILED_FILES_REPORTER}`, `--test-reporter-destination=${failedLog}`,
    ...list,
  ];
  const child = spawn(process.execPath, args, { stdio: 'inherit', env });
  const watchdog = setTimeout(() => {
    console.error(`run-tests: no result after ${timeoutMs / 60_000} minutes; stopping the test runner`);
    child.kill('SIGKILL');
  }, timeoutMs);
  return new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      clearTimeout(watchdog);
      let failed = [];
      try {
        failed = readFileSync(failedLog, 'utf8').split('\n').filter(Boolean);
      } catch {
        // No list: the runner was killed before its reporters ended.
      }
      rmSync(dirname(failedLog), { recursive: true, force: true });
      resolve({ code: code ?? (signal ? 1 : 0), failed });
    });
  });
}

const first = await runTests(files, 2, RUN_TIMEOUT_MS);
let code = first.code;
if (code !== 0 && first.failed.length > 0 && first.failed.length <= MAX_FILES_RUN_AGAIN && !first.failed.includes(UNKNOWN_FILE)) {
  console.log(`# run-tests: ${first.failed.length} file(s) failed beside other files; running each alone once more:`);
  for (const f of first.failed) console.log(`#   ${f}`);
  const again = await runTests(first.failed, 1, RETRY_TIMEOUT_MS);
  code = again.code;
  console.log(code === 0
    ? `# run-tests: they passed alone; the failures above came from running beside other files`
    : `# run-tests: still failing alone: ${again.failed.join(', ') || '(see above)'}`);
}
stub.close();
process.exit(code);
