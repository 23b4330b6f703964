// The phishing module's feeds on the real scan path: PHISHED_PHISHTANK answered by a loopback DNS
// server (the query names Rspamd 3.4 computes), PHISHED_OPENPHISH from a feed file loaded through
// the maps registry, and the default composites that read them.
import { after, before, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine } from '../../src/engine/index.js';
import type { Engine } from '../../src/engine/index.js';
import { createMapRegistry } from '../../src/maps/index.js';
import type { MapRegistry } from '../../src/maps/index.js';
import { builtinModules } from '../../src/modules/index.js';
import { phishingModule } from '../../src/modules/phishing/index.js';
import { PhishingConfig } from '../../src/modules/phishing/config.js';
import { phishtankName } from '../../src/modules/phishing/phishtank.js';
import { urlParts } from '../../src/modules/phishing/url-parts.js';
import { createNetServices } from '../../src/net/index.js';
import type { NetServices } from '../../src/net/index.js';
import { startDnsServer } from '../helpers/dns-server.js';
import type { DnsTestServer, Zone } from '../helpers/dns-server.js';
import { engineConfig, meta, names, symbol } from './helpers.js';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const SUFFIX = 'phishtank.rspamd.com';
const TXT = 'phishtank-id:8142347';

/** Rspamd 3.4's name for {example.com, login/index.php}, from `rspamadm lua` (rspamd_cryptobox_hash base32). */
const RSPAMD_NAME = '1fiaa6yb5bn6ubk4yact9665m6ueddtc.phishtank.rspamd.com';

function message(urls: string[], headers = '', subject = 'Account notice'): Buffer {
  const body = urls.map((u) => `Please check ${u} today.`).join('\r\n');
  return Buffer.from(
    `From: a@sender.example\r\nTo: b@example.net\r\nSubject: ${subject}\r\nMessage-ID: <1@sender.example>\r\n${headers}MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${body}\r\n`,
  );
}

const listedHp = phishtankName(['bank-login.example', 'secure/verify.php'], SUFFIX);
const listedHpq = phishtankName(['bank-login.example', 'secure/verify.php', 'id=42'], SUFFIX);
const failing = phishtankName(['servfail.example', 'x'], SUFFIX);
const slow = phishtankName(['slow.example', 'y'], SUFFIX);
const zone: Zone = {
  [listedHp]: [{ type: 'TXT', data: TXT }],
  [listedHpq]: [{ type: 'TXT', data: 'phishtank-id:99' }],
  [RSPAMD_NAME]: [{ type: 'TXT', data: TXT }],
};

let dns: DnsTestServer;
let dir: string;
let maps: MapRegistry;
const nets: NetServices[] = [];

function net(): NetServices {
  const n = createNetServices({ dns: { servers: [dns.address], timeout: 0.3, retransmits: 0 } });
  nets.push(n);
  return n;
}

before(async () => {
  dns = await startDnsServer({ zone });
  dns.failing.add(failing);
  dns.withheld.add(slow);
  dir = await mkdtemp(join(tmpdir(), 'mailsift-phish-feeds-'));
  await writeFile(
    join(dir, 'feed.txt'),
    ['http://evil.example/paypal/login.html', 'https://evil.example/kit/index.php?session=abc', 'http://bare.example', 'http://bare.example/x', ''].join('\n'),
  );
  maps = createMapRegistry({ baseDir: dir, log: quiet });
});

after(async () => {
  maps.close();
  for (const n of nets) await n.close();
  await dns.close();
  await rm(dir, { recursive: true, force: true });
});

test('defaults mirror Rspamd 3.4 as shipped: PhishTank on (modules.d/phishing.conf), OpenPhish off, premium refused', () => {
  const c = PhishingConfig.parse({});
  assert.equal(c.phishtank_enabled, true);
  assert.equal(c.phishtank_suffix, 'phishtank.rspamd.com');
  assert.equal(c.openphish_enabled, false);
  assert.equal(c.openphish_map, 'https://www.openphish.com/feed.txt');
  assert.equal(PhishingConfig.safeParse({ openphish_premium: true }).success, false);
});

test('the query name is the one Rspamd computes (BLAKE2b of host then path, its base32, 32 characters)', () => {
  assert.equal(phishtankName(['example.com', 'login/index.php'], SUFFIX), RSPAMD_NAME);
});

test('URL parts as Rspamd 3.4 gives them (cases of its test/lua/unit/url.lua): no leading slash, decoded, empty is absent', () => {
  assert.deepEqual(urlParts('http://example.net/path/'), { host: 'example.net', path: 'path/' });
  assert.deepEqual(urlParts('http://example.net/hello%20world.php?arg=x#fragment'), { host: 'example.net', path: 'hello world.php', query: 'arg=x' });
  assert.deepEqual(urlParts('http://example.net/?arg=%23#fragment'), { host: 'example.net', query: 'arg=#' });
  assert.deepEqual(urlParts('http:/\\www.google.com/foo?bar=baz#'), { host: 'www.google.com', path: 'foo', query: 'bar=baz' });
  assert.equal(urlParts('not a url at all'), undefined);
});

describe('PHISHED_PHISHTANK over DNS', () => {
  let engine: Engine;
  before(async () => {
    engine = await createEngine(engineConfig({ phishing: {} }), [phishingModule], { net: net(), log: quiet });
  });

  it('a listed URL: the TXT text is the option, weight 1 (score 7)', async () => {
    dns.queries.length = 0;
    const r = await engine.scan(message(['http://bank-login.example/secure/verify.php', 'http://other.example/page.html']), meta());
    const s = symbol(r, 'PHISHED_PHISHTANK');
    assert.deepEqual(s?.options, [TXT]);
    assert.equal(s?.score, 7);
    const asked = dns.queries.filter((q) => q.name.endsWith(SUFFIX));
    assert.ok(asked.every((q) => q.type === 'TXT'));
    assert.deepEqual(new Set(asked.map((q) => q.name)), new Set([listedHp, phishtankName(['other.example', 'page.html'], SUFFIX)]));
  });

  it('asks exactly the names Rspamd 3.4 asked for the same messages (its resolver log, recorded once)', async () => {
    // Recorded with the reference Rspamd 3.4 (bench/servers.ts startReferenceRspamd, BENCH_DNS_LOG):
    // the displayed URL of a phished link is asked too, an <img> and a pathless URL are not, an ftp
    // URL is, `a/b/../c` is normalised, `%20` decoded, and a query adds a second name.
    const html = Buffer.from(
      'From: a@sender.example\r\nTo: b@example.net\r\nSubject: t\r\nMIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n' +
        '<html><body><a href="http://evil.example/other/page.html">http://www.paypal.com/signin</a>\r\n' +
        '<img src="http://img.example/pic.png"> <a href="http://link.example/p%20q?r=1">click</a></body></html>\r\n',
    );
    const text = message(['https://evil.com/paypal/login.html#top', 'http://bare.com/', 'www.plain.com/a/b/../c', 'ftp://files.com/pub/file.txt']);
    const rspamd = new Map([
      [html, ['1b8bxqq771apzb66hm8rt5e7gxinqhgu', '6c7uyt3kbdia4m9zznjzfig3zg3wdwtp', '8m1tzpja9zp8yq1e1w39pgwk6mx5te7s', 'mophzaeotjejxqmgek5j6f5n3zq9xujg']],
      [text, ['5ero8yi7wm9fwon666gx4oewjre3pj1e', 'gxdhwifkretmiika8g7fuqrtao98bmz6', 'pjkqmoyrrjaqrkr1ta5mspbjres4dtqp']],
    ]);
    for (const [msg, labels] of rspamd) {
      dns.queries.length = 0;
      await engine.scan(msg, meta());
      const asked = [...new Set(dns.queries.filter((q) => q.name.endsWith(SUFFIX)).map((q) => q.name))].sort();
      assert.deepEqual(asked, labels.map((l) => `${l}.${SUFFIX}`));
    }
  });

  it('case of the host and percent escapes do not change the name (Rspamd lower-cases and decodes)', async () => {
    const r = await engine.scan(message(['http://Bank-Login.EXAMPLE/secure/%76erify.php']), meta());
    assert.deepEqual(symbol(r, 'PHISHED_PHISHTANK')?.options, [TXT]);
  });

  it('the Rspamd-computed name hits for its URL', async () => {
    const r = await engine.scan(message(['http://example.com/login/index.php']), meta());
    assert.equal(symbol(r, 'PHISHED_PHISHTANK')?.score, 7);
  });

  it('a URL with a query: host+path listed weighs 0.3, host+path+query listed weighs 1', async () => {
    const partial = await engine.scan(message(['http://bank-login.example/secure/verify.php?id=7']), meta());
    assert.equal(symbol(partial, 'PHISHED_PHISHTANK')?.score, 7 * 0.3);
    const full = await engine.scan(message(['http://bank-login.example/secure/verify.php?id=42']), meta());
    assert.equal(symbol(full, 'PHISHED_PHISHTANK')?.score, 7);
  });

  it('unlisted URLs and URLs without a path: no symbol, no lookup for the pathless ones', async () => {
    dns.queries.length = 0;
    const r = await engine.scan(message(['http://bank-login.example/', 'http://bank-login.example/secure/other.php']), meta());
    assert.ok(!names(r).has('PHISHED_PHISHTANK'));
    assert.equal(dns.queries.filter((q) => q.name.endsWith(SUFFIX)).length, 1);
  });

  it('SERVFAIL and a time-out give no symbol and no other result (Rspamd inserts nothing on a DNS error)', async () => {
    const r = await engine.scan(message(['http://servfail.example/x', 'http://slow.example/y']), meta());
    assert.ok(!names(r).has('PHISHED_PHISHTANK'));
    assert.ok(dns.queries.some((q) => q.name === slow) && dns.queries.some((q) => q.name === failing));
  });

  it('off: no lookup', async () => {
    const off = await createEngine(engineConfig({ phishing: { phishtank_enabled: false } }), [phishingModule], { net: net(), log: quiet });
    dns.queries.length = 0;
    const r = await off.scan(message(['http://bank-login.example/secure/verify.php']), meta());
    assert.ok(!names(r).has('PHISHED_PHISHTANK'));
    assert.equal(dns.queries.length, 0);
  });
});

describe('PHISHED_OPENPHISH from a feed file', () => {
  let engine: Engine;
  before(async () => {
    const cfg = engineConfig({ phishing: { phishtank_enabled: false, openphish_enabled: true, openphish_map: 'feed.txt' } });
    engine = await createEngine(cfg, [phishingModule], { maps, log: quiet });
  });
  const hit = async (url: string) => symbol(await engine.scan(message([url]), meta()), 'PHISHED_OPENPHISH');

  it('a listed URL (other scheme, fragment ignored): weight 1, the host as option', async () => {
    const s = await hit('https://evil.example/paypal/login.html#top');
    assert.equal(s?.score, 7);
    assert.deepEqual(s?.options, ['evil.example']);
  });

  it('another path on a listed host: nothing (Rspamd gives 0.1 only to a phished link)', async () => {
    assert.equal(await hit('http://evil.example/other/page.html'), undefined);
  });

  it('another path on a listed host in a phished link: weight 0.1', async () => {
    const html = Buffer.from(
      'From: a@sender.example\r\nTo: b@example.net\r\nSubject: t\r\nMIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n' +
        '<html><body><a href="http://evil.example/other/page.html">http://www.paypal.com/signin</a></body></html>\r\n',
    );
    const r = await engine.scan(html, meta());
    assert.ok(names(r).has('PHISHING'));
    assert.equal(symbol(r, 'PHISHED_OPENPHISH')?.score, 7 * 0.1);
  });

  it('listed path with another query: 0.3; with the listed query: 1', async () => {
    assert.equal((await hit('https://evil.example/kit/index.php?session=zzz'))?.score, 7 * 0.3);
    assert.equal((await hit('https://evil.example/kit/index.php'))?.score, 7 * 0.3);
    assert.equal((await hit('https://evil.example/kit/index.php?session=abc'))?.score, 7);
  });

  it('a listed bare host: its pathless URL weighs 1', async () => {
    assert.equal((await hit('http://bare.example/'))?.score, 7);
  });

  it('an unlisted host: nothing', async () => {
    assert.equal(await hit('http://good.example/paypal/login.html'), undefined);
  });

  it('`openphish_url` (Rspamd\'s other name) names the feed too', async () => {
    await writeFile(join(dir, 'other-feed.txt'), 'http://named.example/p\n');
    const cfg = engineConfig({ phishing: { phishtank_enabled: false, openphish_enabled: true, openphish_url: 'other-feed.txt' } });
    const e = await createEngine(cfg, [phishingModule], { maps, log: quiet });
    assert.equal(symbol(await e.scan(message(['http://named.example/p']), meta()), 'PHISHED_OPENPHISH')?.score, 7);
  });

  it('the feed is re-read when its file changes', async () => {
    await writeFile(join(dir, 'feed.txt'), 'http://fresh.example/a/b\n');
    await maps.checkFiles();
    assert.equal((await hit('http://fresh.example/a/b'))?.score, 7);
    assert.equal(await hit('http://evil.example/paypal/login.html'), undefined);
  });
});

describe('composites over the feeds (Rspamd composites.conf)', () => {
  let engine: Engine;
  before(async () => {
    engine = await createEngine(engineConfig({}), builtinModules, { net: net(), log: quiet });
  });

  it('PHISH_EMOTION: a PhishTank hit and a Subject ending in "?" (score 1)', async () => {
    const r = await engine.scan(message(['http://bank-login.example/secure/verify.php'], '', 'Is your account locked?'), meta());
    assert.ok(names(r).has('PHISHED_PHISHTANK') && names(r).has('SUBJECT_ENDS_QUESTION'));
    assert.equal(symbol(r, 'PHISH_EMOTION')?.score, 1);
    assert.equal(symbol(r, 'PHISHED_PHISHTANK')?.score, 7, 'policy leave keeps the atom');
    const calm = await engine.scan(message(['http://bank-login.example/secure/verify.php']), meta());
    assert.ok(!names(calm).has('PHISH_EMOTION'));
  });

  it('HACKED_WP_PHISHING: PHP script header, a /wp-…/ URL and a PhishTank hit (score 4.5)', async () => {
    const urls = ['http://bank-login.example/secure/verify.php', 'http://blog.example/wp-content/x.html'];
    const r = await engine.scan(message(urls, 'X-PHP-Originating-Script: 1000:mail.php\r\n'), meta());
    assert.ok(names(r).has('HAS_X_POS') && names(r).has('HAS_WP_URI'));
    assert.equal(symbol(r, 'HACKED_WP_PHISHING')?.score, 4.5);
    const noHit = await engine.scan(message(['http://blog.example/wp-content/x.html'], 'X-PHP-Originating-Script: 1000:mail.php\r\n'), meta());
    assert.ok(!names(noHit).has('HACKED_WP_PHISHING'));
  });
});
