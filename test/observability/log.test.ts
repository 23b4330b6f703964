import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../src/observability/log.js';

function collector() {
  const lines: string[] = [];
  return { lines, destination: { write: (l: string) => lines.push(l) } };
}

test('json format: one object per line, level filtering, tagged children with fields', () => {
  const c = collector();
  const log = createLogger({ level: 'info', destination: c.destination });
  log.debug('hidden');
  log.info('hello', { n: 1 });
  log.child('engine', { module: 'gtube' }).warn('careful');
  assert.equal(c.lines.length, 2);
  const [a, b] = c.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual([a!.msg, a!.n, a!.level, a!.pid], ['hello', 1, 30, process.pid]);
  assert.deepEqual([b!.msg, b!.tag, b!.module, b!.level], ['careful', 'engine', 'gtube', 40]);
});

test('text format: time, level, pid, tag, message, then key=value', () => {
  const c = collector();
  const log = createLogger({ level: 'debug', format: 'text', destination: c.destination });
  log.child('normal').error('listening on 127.0.0.1:1', { port: 1, note: 'two words' });
  assert.equal(c.lines.length, 1);
  assert.match(c.lines[0]!, /^\d{4}-\d\d-\d\dT\S+Z ERROR \d+ \[normal\] listening on 127\.0\.0\.1:1 port=1 note="two words"\n$/);
});

test('silent level writes nothing', () => {
  const c = collector();
  createLogger({ level: 'silent', destination: c.destination }).error('x');
  assert.equal(c.lines.length, 0);
});
