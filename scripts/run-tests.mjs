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

const FAILED_TESTS_REPORTER = fileURLToPath(new URL('./failed-tests-reporter.mjs', import.meta.url));

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

/** Failed tests listed again at the very end of the output. */
const MAX_FAILURES_LISTED = 20;

/** Runs node's test runner on `list`; resolves to its exit code and its failed tests ({ file, name, error }). */
function runTests(list, concurrency, timeoutMs) {
  const failedLog = join(mkdtempSync(join(tmpdir(), 'run-tests-')), 'failed-tests');
  const args = [
    '--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, `--test-timeout=${TEST_TIMEOUT_MS}`,
    '--test-reporter=tap', '--test-reporter-destination=stdout',
    `--test-reporter=${FAILED_TESTS_REPORTER}`, `--test-reporter-destination=${failedLog}`,
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
        failed = readFileSync(failedLog, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
      } catch {
        // No list: the runner was killed before its reporters ended.
      }
      rmSync(dirname(failedLog), { recursive: true, force: true });
      resolve({ code: code ?? (signal ? 1 : 0), failed });
    });
  });
}

/** The files of failed tests; null when a failure names no file (then nothing is run again). */
function filesOf(failed) {
  const files = new Set(failed.map((f) => f.file));
  return files.has(null) ? null : [...files];
}

function listFailures(failed) {
  console.log(`# run-tests: failed tests (${failed.length}${failed.length > MAX_FAILURES_LISTED ? `, the first ${MAX_FAILURES_LISTED}` : ''}):`);
  for (const f of failed.slice(0, MAX_FAILURES_LISTED)) console.log(`#   ${f.file ?? '(no file)'} :: ${f.name} :: ${f.error}`);
}

const first = await runTests(files, 2, RUN_TIMEOUT_MS);
let code = first.code;
// A file that ran alone the first time has nothing to gain from a second run.
const again = code !== 0 && files.length > 1 ? filesOf(first.failed) : null;
if (again && again.length > 0 && again.length <= MAX_FILES_RUN_AGAIN) {
  listFailures(first.failed);
  console.log(`# run-tests: ${again.length} file(s) failed beside other files; running each alone once more:`);
  for (const f of again) console.log(`#   ${f}`);
  const second = await runTests(again, 1, RETRY_TIMEOUT_MS);
  code = second.code;
  if (code === 0) console.log('# run-tests: they passed alone; the failures above came from running beside other files');
  else listFailures(second.failed);
} else if (code !== 0) {
  listFailures(first.failed);
}
stub.close();
process.exit(code);
