// Router edges (controller.md §1.2, §1.7): path normalisation, gzip only for JSON/metrics
// replies, bodies over max_message, bad query parameters, graph type aliases, and a handler
// that throws (a 500 with a message, an /errors entry, and a controller that keeps serving).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { normalisePath } from '../../src/workers/controller/index.js';
import { header, MESSAGES, request, startTestController } from './harness.js';

test('normalisePath: slashes, dots, .. never above root, trailing slash kept, escapes decoded', () => {
  const cases: Array<[string, string]> = [
    ['/stat', '/stat'],
    ['//stat/', '/stat/'],
    ['/foo/../stat', '/stat'],
    ['/../../../../etc/passwd', '/etc/passwd'],
    ['/./a/./b/..', '/a/'],
    ['/%73tat', '/stat'],
    ['/', '/'],
    ['', ''],
  ];
  for (const [raw, want] of cases) assert.equal(normalisePath(raw), want, raw);
});

test('controller edges: gzip rules, body limit, bad parameters, graph aliases, a throwing handler', async () => {
  const ctl = await startTestController('{ bind: "127.0.0.1:0", password: readpass, enable_password: enablepass }', {
    'local.d/mailsift.yaml': 'workers:\n  normal:\n    max_message: 4k\n',
  });
  try {
    const pw: Array<[string, string]> = [['Password', 'enablepass']];
    const gz: Array<[string, string]> = [...pw, ['Accept-Encoding', 'gzip, deflate']];
    const stat = await request(ctl.port, { method: 'GET', path: '/stat', headers: gz });
    assert.equal(header(stat, 'Content-Encoding'), 'gzip');
    assert.equal((JSON.parse(gunzipSync(stat.body).toString()) as { read_only: boolean }).read_only, false);
    const metrics = await request(ctl.port, { method: 'GET', path: '/metrics', headers: gz });
    assert.match(gunzipSync(metrics.body).toString(), /# EOF\n$/);
    const ping = await request(ctl.port, { method: 'GET', path: '/ping', headers: gz });
    assert.equal(header(ping, 'Content-Encoding'), undefined, '/ping is never gzipped');
    const small = readFileSync(`${MESSAGES}/freemail.eml`);
    const scan = await request(ctl.port, { method: 'POST', path: '/checkv2', headers: gz, body: small });
    assert.equal(scan.status, 200);
    assert.equal(header(scan, 'Content-Encoding'), undefined, 'scan results are never gzipped');
    assert.ok(JSON.parse(scan.body.toString()).action);

    const huge = await request(ctl.port, { method: 'POST', path: '/checkv2', headers: pw, body: Buffer.alloc(64 * 1024, 0x61) });
    assert.equal(huge.status, 413, 'a body over max_message is refused before any handler');

    assert.equal((await request(ctl.port, { method: 'GET', path: '/history?from=x', headers: pw })).status, 400);
    const day = JSON.parse((await request(ctl.port, { method: 'GET', path: '/graph?type=day', headers: pw })).body.toString()) as unknown[][];
    const hourly = JSON.parse((await request(ctl.port, { method: 'GET', path: '/graph?type=hourly', headers: pw })).body.toString()) as unknown[][];
    assert.equal(hourly.length, 6);
    assert.equal(hourly[0]!.length, day[0]!.length, 'hourly is the web UI label of the day archive');
    const monthly = JSON.parse((await request(ctl.port, { method: 'GET', path: '/graph?type=MONTHLY', headers: pw })).body.toString()) as unknown[][];
    assert.equal(monthly[0]!.length, 487, 'monthly = the year archive');
    const bad = await request(ctl.port, { method: 'GET', path: '/graph?type=minutely', headers: pw });
    assert.equal(bad.statusLine, 'HTTP/1.1 400 Invalid graph type');

    // A store failure inside a handler: a clear error, and the controller keeps serving.
    await ctl.stores.history.close();
    const broken = await request(ctl.port, { method: 'GET', path: '/history', headers: pw });
    // A closed SQLite store fails (STORE_FAILED: 500); one that is down would be 503 (test/faults/redis-controller.test.ts).
    assert.equal(broken.statusLine, 'HTTP/1.1 500 history store failed: The database connection is not open');
    assert.equal(JSON.parse(broken.body.toString()).error, 'history store failed: The database connection is not open');
    assert.ok(ctl.lines.some((l) => l.level === 'error' && /history store unavailable or failing/.test(l.msg)));
    assert.equal((await request(ctl.port, { method: 'GET', path: '/auth', headers: pw })).status, 200);
  } finally {
    await ctl.close().catch(() => undefined);
  }
});
