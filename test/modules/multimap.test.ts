// multimap through the real engine: every map kind (hash, set, regexp, glob, radix), file,
// http and inline sources, filters, symbols named by map values, forced actions, skips, and a
// map file edited on disk picked up by the next scan after its reload check.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createEngine } from '../../src/engine/index.js';
import type { Engine } from '../../src/engine/index.js';
import { createMapRegistry, type MapRegistry } from '../../src/maps/index.js';
import { multimapModule } from '../../src/modules/multimap/index.js';
import { engineConfig, fixtureMessage, meta, symbol, testMessage } from './helpers.js';
import { quietLog } from '../storage/helpers.js';

/** The registry's file check period in this test (the default is 5 s). */
const FILE_CHECK_MS = 300;

describe('multimap', () => {
  let dir: string;
  let maps: MapRegistry;
  let engine: Engine;
  let http: Server;
  let httpHits = 0;
  const fileMap = () => join(dir, 'senders.map');

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mailsift-multimap-'));
    await writeFile(fileMap(), '# blocked senders\nspammer@bad.example\nworse.example 2.5\n');
    await writeFile(join(dir, 'ips.map'), '192.0.2.0/24\n2001:db8::/32 0.5\n');
    http = createServer((req, res) => {
      httpHits++;
      res.writeHead(200, { 'content-type': 'text/plain', 'last-modified': new Date(0).toUTCString() });
      res.end('tinyurl.com\n');
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    const port = (http.address() as { port: number }).port;
    maps = createMapRegistry({ baseDir: dir, log: quietLog, fileCheckMs: FILE_CHECK_MS });
    const rules = {
      BAD_SENDER: { type: 'from', map: fileMap(), score: 4, description: 'Sender on the local block list' },
      BAD_IP: { type: 'ip', map: 'ips.map', score: 2 },
      RCPT_USER: { type: 'rcpt', filter: 'email:user', map: ['bob', 'carol'], score: 0.1 },
      SUBJECT_RE: { type: 'header', header: 'Subject', regexp: true, map: ['/fixture\\smessage\\swith\\s(lf|crlf)/i'], score: 1 },
      BODY_RE: { type: 'content', filter: 'body', regexp: true, multi: true, map: ['/plain\\sLF/ LF_BODY', '/Hello/ HELLO_BODY:0.5:greeting'], symbols: ['LF_BODY', 'HELLO_BODY'], score: 1 },
      EXE_FILE: { type: 'filename', glob: true, map: ['*.exe', '*.scr'], score: 3 },
      EXT_FILE: { type: 'filename', filter: 'extension', map: ['set;static'], data: ['exe'], score: 1 },
      SHORTENER: { type: 'url', filter: 'tld', map: `http://127.0.0.1:${port}/shorteners.map`, score: 1.5 },
      RCVD_IP: { type: 'received', map: ['4.31.198.0/24'], score: 0.3 },
      RCVD_HOST: { type: 'received', filter: 'from_hostname', map: ['mail.ietf.org'], score: 0.2 },
      HELO_TLD: { type: 'helo', filter: 'tld', map: ['example.net'], score: 0.4 },
      USER_MAP: { type: 'user', map: ['trusted-user'], score: -2, skip_local: true },
      BLOCK_DOMAIN: { type: 'from', filter: 'email:domain', map: ['blocked.example'], action: 'reject', message: 'Sender domain is blocked here' },
      AUTH_SKIP: { type: 'rcpt', map: ['bob@example.org'], score: 0.01, skip_authenticated: true },
    };
    engine = await createEngine(engineConfig({ multimap: { rules } }), [multimapModule], { maps });
  });

  after(async () => {
    maps.close();
    await new Promise<void>((r) => http.close(() => r()));
    await rm(dir, { recursive: true, force: true });
  });

  const lf = fixtureMessage('lf-simple.eml');

  it('looks up addresses in a file map: address, then domain, with weights from values', async () => {
    const r = await engine.scan(lf, meta({ ip: '203.0.113.1', from: 'spammer@bad.example', rcpt: ['bob@example.org'] }));
    assert.deepEqual(symbol(r, 'BAD_SENDER')?.options, ['spammer@bad.example']);
    assert.equal(symbol(r, 'BAD_SENDER')?.score, 4);
    assert.equal(symbol(r, 'BAD_SENDER')?.description, 'Sender on the local block list');
    const d = await engine.scan(lf, meta({ ip: '203.0.113.1', from: 'anyone@worse.example', rcpt: ['bob@example.org'] }));
    assert.deepEqual(symbol(d, 'BAD_SENDER')?.options, ['worse.example']);
    assert.equal(symbol(d, 'BAD_SENDER')?.score, 10, 'value 2.5 multiplies the score 4');
    const miss = await engine.scan(lf, meta({ ip: '203.0.113.1', from: 'ok@good.example', rcpt: ['dave@example.org'] }));
    assert.equal(symbol(miss, 'BAD_SENDER'), undefined);
    assert.equal(symbol(miss, 'RCPT_USER'), undefined);
  });

  it('filters recipients by user part and skips for authenticated senders when asked', async () => {
    const r = await engine.scan(lf, meta({ from: 'a@b.example', rcpt: ['Bob@Example.org'] }));
    assert.deepEqual(symbol(r, 'RCPT_USER')?.options, ['bob']);
    assert.ok(symbol(r, 'AUTH_SKIP'));
    const authed = await engine.scan(lf, meta({ from: 'a@b.example', rcpt: ['bob@example.org'], user: 'someone' }));
    assert.ok(symbol(authed, 'RCPT_USER'));
    assert.equal(symbol(authed, 'AUTH_SKIP'), undefined);
  });

  it('matches IPs in a radix map (IPv4 and IPv6 networks) and Received hops', async () => {
    const v4 = await engine.scan(lf, meta({ ip: '192.0.2.200' }));
    assert.deepEqual(symbol(v4, 'BAD_IP')?.options, ['192.0.2.200']);
    const v6 = await engine.scan(lf, meta({ ip: '2001:db8::7' }));
    assert.equal(symbol(v6, 'BAD_IP')?.score, 1, 'weight 0.5 × score 2');
    const out = await engine.scan(lf, meta({ ip: '198.51.100.1' }));
    assert.equal(symbol(out, 'BAD_IP'), undefined);
    const ham = await engine.scan(fixtureMessage('ham.eml'), meta({ ip: '198.51.100.1' }));
    assert.deepEqual(symbol(ham, 'RCVD_IP')?.options, ['4.31.198.44']);
    assert.deepEqual(symbol(ham, 'RCVD_HOST')?.options, ['mail.ietf.org']);
  });

  it('matches headers and content with regexp maps, inserting the symbols values name', async () => {
    const r = await engine.scan(lf, meta({}));
    assert.deepEqual(symbol(r, 'SUBJECT_RE')?.options, ['fixture message with LF']);
    assert.ok(symbol(r, 'LF_BODY'), 'regexp_multi: every matching pattern counts');
    assert.deepEqual(symbol(r, 'HELLO_BODY')?.options, ['greeting']);
    assert.equal(symbol(r, 'HELLO_BODY')?.score, 0.5);
    assert.equal(symbol(r, 'BODY_RE'), undefined, 'the values named other symbols');
    const crlf = await engine.scan(fixtureMessage('crlf-simple.eml'), meta({}));
    assert.ok(symbol(crlf, 'SUBJECT_RE'));
    assert.equal(symbol(crlf, 'LF_BODY'), undefined);
  });

  it('matches attachment names with glob and set maps, URLs from an http map, HELO by registrable domain', async () => {
    const exe = await engine.scan(testMessage('exe_attm.eml'), meta({ helo: 'mx1.mail.example.net' }));
    assert.deepEqual(symbol(exe, 'EXE_FILE')?.options, ['hello_world.exe']);
    assert.deepEqual(symbol(exe, 'EXT_FILE')?.options, ['exe']);
    assert.deepEqual(symbol(exe, 'HELO_TLD')?.options, ['example.net']);
    const url = await engine.scan(fixtureMessage('url1.eml'), meta({}));
    assert.ok(httpHits >= 1, 'the http map was fetched');
    assert.deepEqual(symbol(url, 'SHORTENER')?.options, ['tinyurl.com']);
    assert.equal(symbol(url, 'EXE_FILE'), undefined);
  });

  it('forces the rule action with its message, ahead of the filters', async () => {
    const r = await engine.scan(lf, meta({ from: 'x@blocked.example' }));
    assert.equal(r.action, 'reject');
    assert.equal(r.messages['smtp_message'], 'Sender domain is blocked here');
    assert.equal(r.passthroughModule, 'multimap');
    assert.ok(symbol(r, 'BLOCK_DOMAIN'));
  });

  it('applies skip_local to the user rule', async () => {
    const remote = await engine.scan(lf, meta({ ip: '203.0.113.5', user: 'trusted-user' }));
    assert.equal(symbol(remote, 'USER_MAP')?.score, -2);
    const local = await engine.scan(lf, meta({ ip: '127.0.0.1', user: 'trusted-user' }));
    assert.equal(symbol(local, 'USER_MAP'), undefined);
  });

  it('lists its file and http maps in the registry the controller reads', async () => {
    const uris = (await maps.sources()).map((s) => s.uri);
    assert.ok(uris.some((u) => u.endsWith('senders.map')), uris.join(' '));
    assert.ok(uris.some((u) => u.startsWith('http://127.0.0.1')));
    assert.ok(engine.symbols().some((s) => s.name === 'BAD_SENDER' && s.group === 'multimap' && s.score === 4));
  });

  it('uses a map file edited on disk within its reload interval', async () => {
    const m = meta({ from: 'fresh@new-spam.example' });
    assert.equal(symbol(await engine.scan(lf, m), 'BAD_SENDER'), undefined);
    await writeFile(fileMap(), 'spammer@bad.example\nnew-spam.example\n');
    const deadline = Date.now() + FILE_CHECK_MS * 10;
    let hit = false;
    while (!hit && Date.now() < deadline) {
      await sleep(FILE_CHECK_MS / 3);
      hit = symbol(await engine.scan(lf, m), 'BAD_SENDER') !== undefined;
    }
    assert.ok(hit, 'the edited map was used');
    const old = await engine.scan(lf, meta({ from: 'anyone@worse.example' }));
    assert.equal(symbol(old, 'BAD_SENDER'), undefined, 'the removed entry no longer matches');
  });
});

describe('multimap symbols are per engine', () => {
  it('two engines with different rules in one process each list their own symbols', async () => {
    const a = createMapRegistry({ baseDir: tmpdir(), log: quietLog });
    const b = createMapRegistry({ baseDir: tmpdir(), log: quietLog });
    try {
      const ea = await createEngine(engineConfig({ multimap: { rules: { ONLY_IN_A: { type: 'from', map: ['a@example.org'], score: 1.5, description: 'rule of engine A' } } } }), [multimapModule], { maps: a });
      const eb = await createEngine(engineConfig({ multimap: { rules: { ONLY_IN_B: { type: 'from', map: ['b@example.org'], score: 2.5 } } } }), [multimapModule], { maps: b });
      const listed = (e: Engine) => Object.fromEntries(e.symbols().filter((s) => s.module === 'multimap').map((s) => [s.name, s.score]));
      assert.deepEqual(listed(ea), { ONLY_IN_A: 1.5 });
      assert.deepEqual(listed(eb), { ONLY_IN_B: 2.5 });
      assert.equal(ea.symbols().find((s) => s.name === 'ONLY_IN_A')?.description, 'rule of engine A');
      const r = await ea.scan(fixtureMessage('lf-simple.eml'), meta({ from: 'a@example.org' }));
      assert.equal(symbol(r, 'ONLY_IN_A')?.score, 1.5);
    } finally {
      a.close();
      b.close();
    }
  });
});
