// The generic external-scanner hooks against small real scanners written here: a line-protocol
// TCP server and an HTTP server answering JSON. Each looks for a marker in the bytes it gets, as
// an engine would look for a signature, and records what it was sent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { createEngine } from '../../src/engine/index.js';
import { builtinModules } from '../../src/modules/index.js';
import type { Logger } from '../../src/plugin-api/index.js';
import { freePort } from '../helpers/real-rspamd.js';
import { engineConfig, meta, names, symbol, testMessage } from './helpers.js';

/** A real message with an attachment (hello_world.exe); the scanners below call its ELF magic a virus. */
const INFECTED = testMessage('exe_attm.eml');
const CLEAN = testMessage('fname.eml');
const ELF_MAGIC = Buffer.from([0x7f, 0x45, 0x4c, 0x46]);

interface Recorded { bytes: Buffer; headers?: http.IncomingHttpHeaders; url?: string }

/** The line protocol: `SCAN <n>\n` + n bytes → `OK\n` or `FOUND <name>\n`. */
async function lineScanner(reply?: (content: Buffer) => string): Promise<{ port: number; seen: Recorded[]; close(): void }> {
  const seen: Recorded[] = [];
  const server = net.createServer((sock) => {
    let buf = Buffer.alloc(0);
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const nl = buf.indexOf(10);
      if (nl < 0) return;
      const m = /^SCAN (\d+)$/.exec(buf.subarray(0, nl).toString('latin1'));
      if (!m) {
        sock.end('ERROR bad request\n');
        return;
      }
      const need = Number(m[1]);
      if (buf.length - nl - 1 < need) return;
      const content = buf.subarray(nl + 1, nl + 1 + need);
      seen.push({ bytes: Buffer.from(content) });
      sock.end(reply ? reply(content) : content.includes(ELF_MAGIC) ? 'FOUND Test.Elf.Line Test.Second\n' : 'OK\n');
    });
    sock.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as net.AddressInfo).port, seen, close: () => server.close() };
}

/** The HTTP hook: POST of the bytes → 200 `{"viruses": [...]}`. */
async function httpScanner(status = 200): Promise<{ port: number; seen: Recorded[]; close(): void }> {
  const seen: Recorded[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const bytes = Buffer.concat(chunks);
      seen.push({ bytes, headers: req.headers, url: req.url ?? '' });
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(status === 200 ? JSON.stringify({ viruses: bytes.includes(ELF_MAGIC) ? ['Test.Elf.Http'] : [] }) : '{"error":"engine busy"}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as net.AddressInfo).port, seen, close: () => server.close() };
}

function engineWith(rules: Record<string, unknown>, log?: Logger) {
  return createEngine(engineConfig({ antivirus: { rules } }), builtinModules, log ? { log } : {});
}

test('TCP line hook: the attachment is sent framed, FOUND names become the rule symbol and the action', async () => {
  const s = await lineScanner();
  try {
    const e = await engineWith({ ext: { type: 'tcp', servers: [`127.0.0.1:${s.port}`], action: 'reject' } });
    const r = await e.scan(INFECTED, meta());
    assert.deepEqual(symbol(r, 'EXT_VIRUS')?.options?.slice().sort(), ['Test.Elf.Line', 'Test.Second']);
    assert.equal(r.action, 'reject');
    assert.equal(r.messages['smtp_message'], 'ext: virus found: "Test.Elf.Line; Test.Second"');
    // Only the attachment went out (the text part is not scanned by default), decoded.
    assert.equal(s.seen.length, 1);
    assert.ok(s.seen[0]!.bytes.subarray(0, 4).equals(ELF_MAGIC));
    const clean = await e.scan(CLEAN, meta());
    assert.ok(!names(clean).has('EXT_VIRUS') && !names(clean).has('EXT_VIRUS_FAIL'));
    assert.notEqual(clean.action, 'reject');
    // Its two attachments have the same bytes: they are sent once.
    assert.equal(s.seen.length, 2);
  } finally {
    s.close();
  }
});

test('TCP line hook: a dead server is skipped for the next one; ERROR and garbage are failures', async () => {
  const good = await lineScanner();
  const dead = await freePort();
  try {
    // Round-robin starts at the dead server; the retransmit reaches the live one.
    const e = await engineWith({ ext: { type: 'tcp', servers: `127.0.0.1:${dead}, 127.0.0.1:${good.port}`, retransmits: 1, symbol: 'EXT_FOUND' } });
    const r = await e.scan(INFECTED, meta());
    assert.ok(names(r).has('EXT_FOUND'));
    assert.ok(!names(r).has('EXT_FOUND_FAIL'));
  } finally {
    good.close();
  }
  for (const [answer, expect] of [['ERROR engine not ready\n', /^ERROR engine not ready$/], ['WHAT?\n', /^unhandled response: WHAT\?$/]] as const) {
    const bad = await lineScanner(() => answer);
    try {
      const r = await (await engineWith({ ext: { type: 'tcp', servers: `127.0.0.1:${bad.port}`, action: 'reject' } })).scan(INFECTED, meta());
      assert.match(symbol(r, 'EXT_VIRUS_FAIL')?.options?.[0] ?? '', expect);
      assert.notEqual(r.action, 'reject');
      assert.equal(bad.seen.length, 1, 'an answer that cannot be read is not asked again');
    } finally {
      bad.close();
    }
  }
});

test('HTTP hook: the part is POSTed with its name and type; the JSON names become symbols', async () => {
  const s = await httpScanner();
  try {
    const e = await engineWith({ web: { type: 'http', servers: `127.0.0.1:${s.port}`, path: '/v1/scan', patterns: { ELF_MALWARE: '^Test\\.Elf\\.' } } });
    const r = await e.scan(INFECTED, meta());
    assert.deepEqual(symbol(r, 'ELF_MALWARE')?.options, ['Test.Elf.Http']);
    assert.ok(!names(r).has('WEB_VIRUS'));
    assert.equal(s.seen.length, 1);
    const req = s.seen[0]!;
    assert.equal(req.url, '/v1/scan');
    assert.equal(req.headers?.['x-filename'], 'hello_world.exe');
    assert.equal(req.headers?.['x-content-type'], encodeURIComponent('application/octet-stream'));
    assert.equal(req.headers?.['content-type'], 'application/octet-stream');
    assert.ok(req.bytes.subarray(0, 4).equals(ELF_MAGIC));
    const clean = await e.scan(CLEAN, meta());
    assert.ok(!names(clean).has('ELF_MALWARE') && !names(clean).has('WEB_VIRUS_FAIL'));
  } finally {
    s.close();
  }
});

test('HTTP hook: a non-200 reply is a failure, and the scan still gets its verdict', async () => {
  const s = await httpScanner(503);
  try {
    const r = await (await engineWith({ web: { type: 'http', servers: `127.0.0.1:${s.port}`, action: 'reject' } })).scan(INFECTED, meta());
    assert.deepEqual(symbol(r, 'WEB_VIRUS_FAIL')?.options, ['HTTP status 503']);
    assert.notEqual(r.action, 'reject');
    assert.ok(r.symbols.length > 1);
  } finally {
    s.close();
  }
});

test('off by default: no rule, no module, listed with the other modules off by configuration', async () => {
  const lines: Array<{ msg: string; extra?: Record<string, unknown> }> = [];
  const log: Logger = { debug() {}, info: (msg, extra) => lines.push({ msg, ...(extra ? { extra } : {}) }), warn() {}, error() {} };
  const e = await engineWith({}, log);
  const off = lines.find((l) => l.msg.startsWith('modules off by configuration: '));
  assert.ok(off && (off.extra?.['modules'] as string[]).includes('antivirus'), JSON.stringify(lines));
  const r = await e.scan(INFECTED, meta());
  assert.ok(!r.symbols.some((s) => s.groups.includes('antivirus')));
});

test('a rule without a type that its name does not give is refused with a reason', async () => {
  const errors: string[] = [];
  const log: Logger = { debug() {}, info() {}, warn() {}, error: (msg) => errors.push(msg) };
  await engineWith({ scanner1: { servers: '127.0.0.1:1' } }, log);
  assert.ok(errors.some((m) => /rule scanner1 needs a type/.test(m)), errors.join('\n'));
  await engineWith({ line: { type: 'tcp', servers: '127.0.0.1' } }, log);
  assert.ok(errors.some((m) => /server 127\.0\.0\.1 needs a port/.test(m)), errors.join('\n'));
});
