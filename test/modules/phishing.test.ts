import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../../src/engine/index.js';
import { defineModule } from '../../src/plugin-api/index.js';
import { phishingModule } from '../../src/modules/phishing/index.js';
import { phishedLink } from '../../src/modules/phishing/displayed.js';
import { editDistance, phishingWeight } from '../../src/modules/phishing/weight.js';
import { engineConfig, fixtureMessage, meta, symbol, testMessage } from './helpers.js';

async function engine(config: Record<string, unknown> = {}) {
  return createEngine(engineConfig({ phishing: config }), [phishingModule]);
}

function html(body: string): Buffer {
  return Buffer.from(
    `From: a@example.org\r\nTo: b@example.net\r\nSubject: t\r\nMIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<html><body>${body}</body></html>\r\n`,
  );
}

test('Rspamd suite messages: a shown URL of another site is PHISHING with shown->real', async () => {
  const e = await engine();
  for (const [file, option] of [
    ['phishing1.eml', 'cnn.com->example.net'],
    ['phishing2.eml', 'myspace.com->example.net'],
    ['phishing3.eml', 'bank.com->example.net'],
    ['url3.eml', 'bank.com->rspamd.com'],
    ['url4.eml', 'rspamd.tk->example.com'],
    // A redirector carrying two targets, a nested one to another site, or nesting beyond the cap.
    ['phishing_query_multi.eml', 'cnn.com->example.net'],
    ['phishing_query_nested_fire.eml', 'cnn.com->example.net'],
    ['phishing_query_overcap.eml', 'cnn.com->example.net'],
  ]) {
    const s = symbol(await e.scan(testMessage(file!), meta()), 'PHISHING');
    assert.ok(s, `${file} must be PHISHING`);
    assert.deepEqual(s.options, [option], file);
  }
});

test('no PHISHING: same label on another TLD, redirector to the shown site, plain ham', async () => {
  const e = await engine();
  for (const file of ['phishing_same_label_cross_tld.eml', 'phishing_query_safe.eml', 'phishing_query_nested.eml', 'html_phishing.eml']) {
    assert.equal(symbol(await e.scan(testMessage(file), meta()), 'PHISHING'), undefined, file);
  }
  assert.equal(symbol(await e.scan(fixtureMessage('ham.eml'), meta()), 'PHISHING'), undefined);
});

test('weight: look-alike names weigh most, unrelated names half, confusables 1', async () => {
  const e = await engine();
  const score = async (shown: string, real: string) =>
    symbol(await e.scan(html(`<a href="http://${real}/login">http://${shown}/login</a>`), meta()), 'PHISHING')?.score;
  assert.equal(await score('www.paypal.com', 'www.paypall.com'), 4);
  const close = (await score('www.paypal.com', 'www.paypa1.com')) ?? 0;
  assert.ok(close > 3.9 && close < 4, String(close));
  assert.equal(await score('www.paypal.com', 'evil.example.net'), 2);
  // Cyrillic "а" inside a Latin label.
  assert.equal(await score('www.paypal.com', 'www.pаypal-secure.com'), 4);
  // Subdomains of each other are the same site.
  assert.equal(await score('paypal.com', 'www.paypal.com'), undefined);
});

test('headline links ("Site.com: story") count only with headline_links', async () => {
  const msg = html('<a href="http://click.tracker.example.net/c?1">News.com: Top stories today</a>');
  assert.equal(symbol(await (await engine()).scan(msg, meta()), 'PHISHING'), undefined);
  assert.equal(symbol(await (await engine({ headline_links: true })).scan(msg, meta()), 'PHISHING')?.options?.[0], 'news.com->example.net');
});

test('exceptions and strict domains', async () => {
  const msg = html('<a href="http://evil.example.net/">http://www.bank.com/</a>');
  assert.equal(symbol(await (await engine({ exceptions: ['example.net'] })).scan(msg, meta()), 'PHISHING'), undefined);
  assert.equal(symbol(await (await engine({ strict_domains: ['bank.com'] })).scan(msg, meta()), 'PHISHING')?.score, 4);
});

test('the link URL is flagged phished for rules that run after', async () => {
  // A user-style module reading the flag through the public API, ordered after the check.
  const seen = defineModule({
    name: 'seen',
    symbols: { SEEN_PHISHED: { score: 0 } },
    setup(ctx) {
      ctx.symbol({
        name: 'SEEN_PHISHED',
        deps: ['PHISHING_CHECK'],
        check(task) {
          const hit = task.message.urls.filter((u) => u.flags.has('phished')).map((u) => u.host);
          if (hit.length) task.insert('SEEN_PHISHED', 1, hit);
        },
      });
    },
  });
  const e = await createEngine(engineConfig(), [phishingModule, seen]);
  const r = await e.scan(html('<a href="http://evil.example.net/">http://www.bank.com/</a> <a href="http://ok.example.org/">fine</a>'), meta());
  assert.deepEqual(symbol(r, 'SEEN_PHISHED')?.options, ['evil.example.net']);
});

test('helpers: edit distance with substitution cost 2, weight bands, link parsing', () => {
  assert.equal(editDistance('paypal', 'paypal'), 0);
  assert.equal(editDistance('paypal', 'paypa1'), 2);
  assert.equal(editDistance('abc', 'abcd'), 1);
  assert.equal(phishingWeight('paypal.com', 'paypal.net'), 0);
  assert.equal(phishingWeight('paypal.com', 'paypall.com'), 1);
  assert.equal(phishingWeight('paypal.com', 'paypa1.com'), Math.tanh(3 * (1.1 - 4 / 12)));
  const mid = phishingWeight('amazon.com', 'amazin-shop.com');
  assert.ok(mid > 0 && mid < 1, String(mid));
  assert.equal(phishedLink('mailto:x@evil.example.net', 'http://bank.com'), undefined);
  assert.equal(phishedLink('http://evil.example.net/', 'Visit http://bank.com'), undefined, 'URL must open the text');
  assert.equal(phishedLink('http://evil.example.net/', 'http://bank.com')?.whole, true);
});

test('links through a click-tracking endpoint are tracking, not PHISHING, unless tracker_links is on', async () => {
  const tracked = html('<p>Visit <a href="http://clicks.example.net/Click?q=4e-0Y95InZA4ufV6aJ">ReadyHosting.com</a> today</p>');
  const through = html('<a href="http://www.example.net/mm/Clickthrough/23317062/uBn6/*http://www.shop.test">www.shop.test</a>');
  const e = await engine();
  assert.equal(symbol(await e.scan(tracked, meta()), 'PHISHING'), undefined);
  assert.equal(symbol(await e.scan(through, meta()), 'PHISHING'), undefined);
  const rspamdLike = await engine({ tracker_links: true });
  assert.deepEqual(symbol(await rspamdLike.scan(tracked, meta()), 'PHISHING')?.options, ['readyhosting.com->example.net']);
  // A tracker-looking word elsewhere in the URL does not excuse a spoofed link.
  const spoof = html('<a href="http://login.example.net/account?from=click">www.paypal.com</a>');
  assert.ok(symbol(await e.scan(spoof, meta()), 'PHISHING'));
  // A brand in strict_domains stays protected behind a tracker-looking path.
  const brand = html('<a href="http://evil.example.net/click?id=1">www.bank.com</a>');
  assert.equal(symbol(await e.scan(brand, meta()), 'PHISHING'), undefined);
  assert.equal(symbol(await (await engine({ strict_domains: ['bank.com'] })).scan(brand, meta()), 'PHISHING')?.score, 4);
});
