// Keys that come from a request (a Settings header) are entries, never prototypes: a symbol
// Settings inserts as `__proto__` or `constructor` is counted in /counters and kept in the
// history row under its name, `messages` and `add_headers` keep a `__proto__` key, and no
// counter is written into Object.prototype of the process that recorded the scan. Real
// controller, its own /checkv2 and its in-process statistics hub.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FLUSH_INTERVAL_MS } from '../../src/observability/stats-recorder.js';
import { request, startTestController, type RunningController } from './harness.js';

const MSG = 'From: a@example.com\r\nTo: b@example.net\r\nSubject: keys\r\nMessage-ID: <data-keys-1@example.com>\r\n\r\nbody\r\n';
const PW: Array<[string, string]> = [['Password', 'enablepass']];

let ctl: RunningController;

before(async () => {
  ctl = await startTestController('{ bind: "127.0.0.1:0", password: readpass, enable_password: enablepass, auth_fail_limit: 0 }');
});

after(async () => {
  await ctl?.close();
});

async function json(path: string, headers: Array<[string, string]> = [], body?: string): Promise<unknown> {
  const r = await request(ctl.port, { method: body === undefined ? 'GET' : 'POST', path, headers: [...PW, ...headers], ...(body !== undefined ? { body } : {}) });
  assert.equal(r.status, 200, `${path}: ${r.statusLine} ${r.body.toString()}`);
  return JSON.parse(r.body.toString('utf8')) as unknown;
}

describe('request-chosen keys', () => {
  it('symbols, messages and headers named __proto__ or constructor stay entries; nothing reaches Object.prototype', async () => {
    // Written out: an object literal's `__proto__:` sets a prototype instead of a key.
    const text = '{"symbols":{"__proto__":2,"constructor":3},"messages":{"__proto__":"proto message","smtp_message":"hello"},"add_headers":{"__proto__":"x","X-Data-Keys":"y"}}';
    const reply = (await json('/checkv2', [['Settings', text]], MSG)) as {
      symbols: Record<string, { score: number }>;
      messages: Record<string, string>;
      milter?: { add_headers?: Record<string, unknown> };
    };
    assert.ok(Object.hasOwn(reply.symbols, '__proto__'), JSON.stringify(reply.symbols));
    assert.ok(Object.hasOwn(reply.symbols, 'constructor'), JSON.stringify(reply.symbols));
    assert.equal(reply.messages['__proto__'], 'proto message');
    assert.equal(reply.messages.smtp_message, 'hello');
    assert.ok(reply.milter?.add_headers && Object.hasOwn(reply.milter.add_headers, '__proto__'), JSON.stringify(reply.milter));
    assert.ok(Object.hasOwn(reply.milter.add_headers, 'X-Data-Keys'));

    await new Promise((r) => setTimeout(r, FLUSH_INTERVAL_MS + 200));
    const proto = Object.prototype as unknown as Record<string, unknown>;
    for (const k of ['hits', 'weight', 'time']) assert.equal(proto[k], undefined, `Object.prototype.${k} was written`);

    const counters = (await json('/counters')) as Array<{ symbol: string; hits: number; weight: number }>;
    const byName = new Map(counters.map((c) => [c.symbol, c]));
    assert.equal(byName.get('__proto__')?.hits, 1, 'the __proto__ symbol is counted under its name');
    assert.equal(byName.get('constructor')?.hits, 1, 'so is constructor');
    assert.equal(byName.get('constructor')?.weight, reply.symbols['constructor']!.score);

    const history = (await json('/history')) as { rows: Array<{ 'message-id'?: string; symbols: Record<string, { score: number }> }> };
    const row = history.rows.find((r) => r['message-id'] === 'data-keys-1@example.com');
    assert.ok(row, 'the scan is in the history');
    assert.ok(Object.hasOwn(row.symbols, '__proto__'), JSON.stringify(row.symbols));
    assert.equal(row.symbols['constructor']?.score, reply.symbols['constructor']!.score);
  });
});
