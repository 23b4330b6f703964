// Request values a client controls that reach JavaScript's object model or a line-based reply:
// a `__proto__` key in a UCL Settings value, a symbol named `__proto__`, and line breaks in text
// the legacy RSPAMC reply copies onto one line. Found by the property tests
// (parsers-property.test.ts); each is checked here on the real path, a worker on a socket.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { exchange, parseReply, startRealWorker } from './harness.js';

const MSG = 'From: a@example.com\r\nTo: b@example.net\r\nSubject: hi\r\nMessage-ID: <hv-1@example.com>\r\n\r\nbody\r\n';

function v2(headers: Array<[string, string]>): Buffer {
  let head = `POST /checkv2 HTTP/1.1\r\nConnection: close\r\nContent-Length: ${MSG.length}\r\n`;
  for (const [k, v] of headers) head += `${k}: ${v}\r\n`;
  return Buffer.from(`${head}\r\n${MSG}`);
}

describe('hostile request values', () => {
  let port = 0;
  let close: () => Promise<void>;
  before(async () => {
    const w = await startRealWorker();
    port = w.port;
    close = w.close;
  });
  after(() => close());

  it('a UCL Settings value with a `__proto__` key pollutes no prototype and still applies', async () => {
    const settings = '__proto__ { polluted = 1; toString = 2 } actions { reject = 0.001 }';
    const r = parseReply((await exchange(port, v2([['Settings', settings]]))).data);
    assert.equal(r.status, 200);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(typeof ({} as object).toString, 'function');
    assert.equal((JSON.parse(r.body.toString()) as { action: string }).action, 'reject');
    // The worker still serves a second scan normally.
    const again = parseReply((await exchange(port, v2([]))).data);
    assert.equal(again.status, 200);
  });

  it('a symbol named `__proto__` is listed in the reply next to the others', async () => {
    const r = parseReply((await exchange(port, v2([['Settings', '{"symbols":["__proto__","HV_OTHER"]}']]))).data);
    assert.equal(r.status, 200);
    const text = r.body.toString();
    const symbols = (JSON.parse(text) as { symbols: Record<string, { name: string }> }).symbols;
    assert.ok(Object.hasOwn(symbols, '__proto__'), text);
    assert.equal(symbols['__proto__']!.name, '__proto__');
    assert.equal(symbols.HV_OTHER?.name, 'HV_OTHER');
    // The symbols object holds symbols only (no keys of a symbol's own record leaking up a level).
    assert.equal(Object.hasOwn(symbols, 'metric_score'), false);
  });

  it('line breaks in settings messages and symbol names stay inside their RSPAMC reply line', async () => {
    const settings = JSON.stringify({ messages: { smtp_message: 'x\r\nAction: no action' }, symbols: ['HV_A\r\nAction: no action'] });
    const req = `CHECK RSPAMC/1.3\r\nContent-length: ${MSG.length}\r\nSettings: ${settings}\r\n\r\n${MSG}`;
    const text = (await exchange(port, Buffer.from(req))).data.toString();
    const lines = text.split('\r\n').filter((l) => l.length > 0);
    assert.match(lines[0]!, /^RSPAMD\/1\.3 0 EX_OK$/);
    for (const l of lines.slice(1)) assert.match(l, /^(Metric|Action|Subject|Symbol|Message|Message-ID): /, JSON.stringify(text));
    assert.equal(lines.filter((l) => l.startsWith('Action: ')).length, 1, JSON.stringify(text));
  });
});
