// The README's controller examples (section "Controller"), run with curl as written against
// `mailsift serve` on a copy of the shipped conf/ (issue 17 item 7). The only changes: the
// port (the test listens on an ephemeral one, set in local.d) and curl's own output options.
// From another address the same commands are refused: the shipped configuration trusts the
// machine itself and sets no password.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT, runCli, type LogLine } from '../cli/run-cli.js';

const run = promisify(execFile);

const GTUBE_MESSAGE = 'From: a@example.org\r\nTo: b@example.net\r\nSubject: test\r\nMessage-ID: <readme-gtube@example.org>\r\n\r\nXJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X\r\n';

/** The `curl …` lines of the README's Controller section (up to the next `## ` heading). */
async function readmeCurlLines(): Promise<string[]> {
  const readme = await readFile(join(REPO_ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Controller\n');
  assert.ok(start >= 0, 'README has a Controller section');
  const end = readme.indexOf('\n## ', start + 1);
  return readme
    .slice(start, end < 0 ? undefined : end)
    .split('\n')
    .filter((l) => l.startsWith('curl '));
}

/** Runs one README line through sh, on `port`, optionally from another local address; status and body. */
async function curl(line: string, port: number, fromAddress?: string, cwd?: string): Promise<{ status: number; body: string }> {
  assert.match(line, /127\.0\.0\.1:11334\//, 'the examples name the shipped controller address');
  const opts = `-s -o - -w '\\n%{http_code}'${fromAddress ? ` --interface ${fromAddress}` : ''}`;
  const cmd = line.replace('127.0.0.1:11334/', `127.0.0.1:${port}/`).replace(/^curl /, `curl ${opts} `);
  const { stdout } = await run('sh', ['-c', cmd], { timeout: 30_000, maxBuffer: 16 * 1024 * 1024, ...(cwd ? { cwd } : {}) });
  const nl = stdout.lastIndexOf('\n');
  return { status: Number(stdout.slice(nl + 1)), body: stdout.slice(0, nl) };
}

test('the README controller examples work as written on the shipped configuration, from this machine only', async () => {
  const lines = await readmeCurlLines();
  const paths = lines.map((l) => /11334(\/[a-z/]+)/.exec(l)?.[1]);
  assert.deepEqual(paths, ['/stat', '/metrics', '/history', '/graph', '/errors', '/saveactions', '/plugins/maps/query', '/whatif', '/health', '/checkexplain']);

  const tmp = await mkdtemp(join(tmpdir(), 'mailsift-readme-'));
  const dir = join(tmp, 'conf');
  await cp(join(REPO_ROOT, 'conf'), dir, { recursive: true });
  await mkdir(join(dir, 'local.d'), { recursive: true });
  // Ports only: everything else (secure_ip, passwords, data_dir ../data → tmp/data) as shipped.
  // The examples that post `@message.eml` read it from the directory curl runs in.
  await writeFile(join(tmp, 'message.eml'), GTUBE_MESSAGE);
  await writeFile(join(dir, 'local.d', 'mailsift.yaml'), 'workers:\n  normal: { bind: "127.0.0.1:0" }\n  controller: { bind: "127.0.0.1:0" }\n');
  const srv = runCli(['serve', '--workers', '1', '-c', dir]);
  try {
    const listen = await srv.waitFor((l: LogLine) => l.worker === 'controller' && typeof l.port === 'number' && /^listening on /.test(l.msg), 'the controller listener', 60_000);
    const port = listen.port!;
    // /health reports the scan worker too: wait until it is serving, not just the controller.
    const normalPort = (await srv.waitFor((l: LogLine) => l.worker === 'normal' && typeof l.port === 'number' && /^listening on /.test(l.msg), 'the normal listener', 60_000)).port!;
    const warning = srv.lines.find((l) => l.level === 40 && l.msg.startsWith('no controller password is configured'));
    assert.ok(warning, `a start-up warning names the open controller:\n${srv.output()}`);

    for (const line of lines) {
      const r = await curl(line, port, undefined, tmp);
      assert.equal(r.status, 200, `${line}\n${r.body.slice(0, 300)}`);
      if (line.includes('/saveactions')) assert.equal(r.body, '{"success":true}');
      else if (line.includes('/metrics')) assert.ok(r.body.endsWith('# EOF\n'), r.body.slice(-100));
      else if (line.includes('/health')) {
        // The supervisor's view: one scan worker and the controller, both up; every store reachable.
        const h = JSON.parse(r.body) as { workers: Array<{ role: string; state: string; restarts: number }>; stores: Array<{ store: string; ok: boolean }> };
        assert.deepEqual(h.workers.map((w) => [w.role, w.state, w.restarts]).sort(), [['controller', 'up', 0], ['normal', 'up', 0]], r.body);
        assert.deepEqual(h.stores.filter((st) => !st.ok), [], r.body);
      }
      else if (line.includes('/checkexplain')) {
        // The history row of the scan just made, with its explanation.
        const row = JSON.parse(r.body) as { action: string; symbols: Record<string, unknown>; explain?: unknown };
        assert.equal(row.action, 'reject', r.body.slice(0, 300));
        assert.ok('GTUBE' in row.symbols && row.explain !== undefined, r.body.slice(0, 300));
      }
      else assert.doesNotThrow(() => JSON.parse(r.body), `${line}: a JSON reply`);
    }
    // /health counts each worker's own scans: one scan on the scan port shows on the normal worker.
    const scanned = await fetch(`http://127.0.0.1:${normalPort}/checkv2`, { method: 'POST', body: GTUBE_MESSAGE });
    assert.equal(scanned.status, 200);
    const healthLine = lines.find((l) => l.includes('/health'))!;
    let normal: { scanned?: number; actions?: Record<string, number> } | undefined;
    for (let i = 0; i < 100 && !(normal?.scanned && normal.scanned >= 1); i++) {
      await new Promise((r) => setTimeout(r, 100));
      const h = JSON.parse((await curl(healthLine, port)).body) as { workers: Array<{ role: string; scanned?: number; actions?: Record<string, number> }> };
      normal = h.workers.find((w) => w.role === 'normal');
    }
    assert.equal(normal?.scanned, 1, JSON.stringify(normal));
    assert.equal(normal?.actions?.reject, 1, JSON.stringify(normal));

    const stat = JSON.parse((await curl(lines[0]!, port)).body) as { read_only: boolean };
    assert.equal(stat.read_only, false);

    // 127.0.0.2 reaches the loopback listener too (Linux routes 127/8 to lo) but is not trusted.
    for (const line of lines) assert.equal((await curl(line, port, '127.0.0.2', tmp)).status, 401, `${line} from 127.0.0.2`);

    srv.child.kill('SIGTERM');
    assert.equal((await srv.exited).code, 0, srv.output());
  } finally {
    srv.child.kill('SIGKILL');
    await rm(tmp, { recursive: true, force: true });
  }
});
