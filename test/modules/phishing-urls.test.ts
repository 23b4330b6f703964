import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../../src/engine/index.js';
import { phishingModule } from '../../src/modules/phishing/index.js';
import { urlChecksModule } from '../../src/modules/url-checks/index.js';
import { isSpoofedHost } from '../../src/modules/url-checks/check.js';
import { engineConfig, fixtureMessage, meta, symbol, testMessage } from './helpers.js';

const engine = (cfg: Record<string, unknown> = {}) => createEngine(engineConfig({ url_checks: cfg }), [phishingModule, urlChecksModule]);

function msg(body: string, html = false): Buffer {
  const type = html ? 'text/html' : 'text/plain';
  return Buffer.from(`From: a@example.org\r\nTo: b@example.net\r\nSubject: t\r\nMIME-Version: 1.0\r\nContent-Type: ${type}; charset=utf-8\r\n\r\n${body}\r\n`);
}

test('OMOGRAPH_URL: a Latin host name with Cyrillic letters; full weight when shown as link text', async () => {
  const e = await engine();
  // "pаypal" with a Cyrillic а (U+0430), written out and in punycode.
  const plain = await e.scan(msg('Log in at http://www.p\u0430ypal.com/login today'), meta());
  assert.equal(symbol(plain, 'OMOGRAPH_URL')?.score, 2.5);
  const puny = await e.scan(msg('Log in at http://www.xn--pypal-4ve.com/login today'), meta());
  assert.deepEqual(symbol(puny, 'OMOGRAPH_URL')?.options, ['www.p\u0430ypal.com']);
  const shown = await e.scan(msg('<a href="http://evil.example.net/">http://www.p\u0430ypal.com/</a>', true), meta());
  assert.equal(symbol(shown, 'OMOGRAPH_URL')?.score, 5);
});

test('OMOGRAPH_URL stays quiet on whole-script IDN names and ordinary mail', async () => {
  const e = await engine();
  assert.equal(symbol(await e.scan(msg('Сайт: http://пример.рф/ и http://例え.jp/'), meta()), 'OMOGRAPH_URL'), undefined);
  for (const f of ['url1.eml', 'utf.eml', 'ham.eml']) assert.equal(symbol(await e.scan(fixtureMessage(f), meta()), 'OMOGRAPH_URL'), undefined, f);
  assert.equal(isSpoofedHost('xn--80ak6aa92e.com'), false, 'ASCII punycode form is not judged');
  assert.equal(isSpoofedHost('аррӏе.com'), false, 'a whole-Cyrillic label is an IDN name, not a mix');
  assert.equal(isSpoofedHost('gοogle.com'), true, 'Greek omicron in a Latin label');
});

test('HAS_IPFS_GATEWAY_URL: gateway paths and subdomain gateways, not the word ipfs', async () => {
  const e = await engine();
  const cid = 'QmXoypizjW3WknFiJnKLwHCnL72vedxjQkDDP1mXWo6uco';
  const path = await e.scan(msg(`Your invoice: https://gateway.example.net/ipfs/${cid}/invoice.html`), meta());
  assert.deepEqual(symbol(path, 'HAS_IPFS_GATEWAY_URL')?.options, ['gateway.example.net']);
  const sub = await e.scan(msg('Open https://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi.ipfs.dweb.example/'), meta());
  assert.ok(symbol(sub, 'HAS_IPFS_GATEWAY_URL'));
  assert.equal(symbol(await e.scan(msg('Read https://docs.example.org/ipfs-explained.html'), meta()), 'HAS_IPFS_GATEWAY_URL'), undefined);
  assert.equal(symbol(await e.scan(testMessage('url1.eml'), meta()), 'HAS_IPFS_GATEWAY_URL'), undefined);
  const off = await (await engine({ ipfs: false })).scan(msg(`https://gateway.example.net/ipfs/${cid}`), meta());
  assert.equal(symbol(off, 'HAS_IPFS_GATEWAY_URL'), undefined);
});

test('R_SUSPICIOUS_URL: hosts written to hide what they are; ordinary and dotted-quad hosts are not', async () => {
  const e = await engine();
  const cases: Array<[string, string]> = [
    ['Claim it at http://3232235777/claim now', '192.168.1.1'], // a dotted quad written as one number
    ['Claim it at http://0x7f.1/claim now', '127.0.0.1'], // hex and short form
    ['Claim it at http://paypal.com@@evil.example.net/claim now', 'evil.example.net'], // doubled @
  ];
  for (const [body, host] of cases) {
    const r = await e.scan(msg(body), meta());
    assert.deepEqual(symbol(r, 'R_SUSPICIOUS_URL')?.options, [host], body);
    assert.equal(symbol(r, 'R_SUSPICIOUS_URL')?.score, 5);
  }
  const html = await e.scan(msg('<a href="http://0xC0.0xA8.1.1/login">Log in</a>', true), meta());
  assert.deepEqual(symbol(html, 'R_SUSPICIOUS_URL')?.options, ['192.168.1.1']);
  // A dotted quad, a user name, and a %-escaped host (decoded silently, as Rspamd does) are not obscured.
  const plain = await e.scan(msg('See http://192.0.2.10:8080/status and http://joe@www.example.com/page and http://w%77w.example.org/'), meta());
  assert.equal(symbol(plain, 'R_SUSPICIOUS_URL'), undefined);
  for (const f of ['url1.eml', 'utf.eml', 'ham.eml']) assert.equal(symbol(await e.scan(fixtureMessage(f), meta()), 'R_SUSPICIOUS_URL'), undefined, f);
  assert.equal(symbol(await (await engine({ suspicious: false })).scan(msg(cases[0]![0]), meta()), 'R_SUSPICIOUS_URL'), undefined);
});

test('ZERO_WIDTH_SPACE_URL: a zero-width space inside a link host', async () => {
  const e = await engine();
  const r = await e.scan(msg('<a href="http://pay\u200bpal.com/login">PayPal</a>', true), meta());
  assert.deepEqual(symbol(r, 'ZERO_WIDTH_SPACE_URL')?.options, ['paypal.com']);
  assert.equal(symbol(r, 'ZERO_WIDTH_SPACE_URL')?.score, 7);
  assert.equal(symbol(await e.scan(msg('<a href="http://paypal.com/login">PayPal</a>', true), meta()), 'ZERO_WIDTH_SPACE_URL'), undefined);
});
