// URL normalisation and de-duplication in UrlCollector.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UrlCollector } from '../../src/message/urls.js';

function collect(text: string): UrlCollector {
  const c = new UrlCollector();
  c.scanText(text, ['text']);
  return c;
}

test('hosts are lower-cased, IDN kept in both forms, tld in the host form', () => {
  const urls = [...collect('see http://ПРИМЕР.рф/x and www.Example.COM today').urls.values()];
  const idn = urls.find((u) => u.hostAscii === 'xn--e1afmkfd.xn--p1ai')!;
  assert.equal(idn.host, 'пример.рф');
  assert.equal(idn.tld, 'пример.рф');
  const www = urls.find((u) => u.host === 'www.example.com')!;
  assert.equal(www.url, 'http://www.example.com');
  assert.deepEqual([...www.flags].sort(), ['schemaless', 'text']);
  assert.equal(www.tld, 'example.com');
});

test('IP hosts are numeric, user info is kept, e-mails go to the address list', () => {
  const c = collect('http://[2001:DB8::1]/a http://user@host.example.co.uk:8080/p mail me: Bob@Example.ORG.');
  const urls = [...c.urls.values()];
  const v6 = urls.find((u) => u.host === '2001:db8::1')!;
  assert.ok(v6.flags.has('numeric'));
  assert.equal(v6.tld, '2001:db8::1');
  const auth = urls.find((u) => u.host === 'host.example.co.uk')!;
  assert.equal(auth.url, 'http://user@host.example.co.uk:8080/p');
  assert.equal(auth.tld, 'example.co.uk');
  assert.deepEqual([...c.emails.keys()], ['Bob@example.org']);
});

test('duplicates merge their flags; relative and script links are ignored', () => {
  const c = new UrlCollector();
  c.scanText('http://a.example.com/x', ['text']);
  c.scanHtml({ tags: new Set(['a']), images: ['http://a.example.com/x', 'cid:logo'], unbalanced: false, links: [
    { href: '/relative/path', text: '' },
    { href: 'javascript:alert(1)', text: '' },
    { href: '#top', text: '' },
    { href: 'mailto:Someone@Example.net?subject=hi', text: 'write' },
    { href: 'mailto:not-an-address', text: '' },
  ] });
  const urls = [...c.urls.values()];
  assert.deepEqual(urls.map((u) => u.url), ['http://a.example.com/x', 'mailto:Someone@example.net']);
  assert.deepEqual([...urls[0]!.flags].sort(), ['image', 'text']);
  assert.equal(urls[1]!.isEmail, true);
  assert.ok(c.emails.has('Someone@example.net'));
});

test('the host of a link in a scheme the URL parser keeps opaque is lower-cased too (found by the URL property test)', () => {
  const c = new UrlCollector();
  c.scanHtml({ tags: new Set(['a']), images: [], unbalanced: false, links: [{ href: 'Bhttp://Bhttp://', text: '' }, { href: 'xmpp://Chat.Example.ORG/room', text: '' }] });
  assert.deepEqual([...c.urls.values()].map((u) => u.hostAscii), ['bhttp', 'chat.example.org']);
});

test("Rspamd's occurrence count: repeated tokens count again, strict reading skips bare host names, link texts follow Rspamd's record", () => {
  const c = new UrlCollector();
  c.scanText('go http://a.example/x and again http://a.example/x, or bshop.com', ['text'], true, true, true);
  const a = c.urls.get('http://a.example/x')!;
  assert.equal(a.count, 2);
  assert.deepEqual([...a.firstFlags], ['text']);
  const bare = c.urls.get('http://bshop.com')!;
  assert.equal(bare.count, 0, 'a strict reading (HTML or a two-part alternative) does not see it');
  c.scanText('or bshop.com', ['text']);
  assert.equal(bare.count, 1, 'a full reading does');
  // A link whose text shows a URL of the text part: that URL is now only shown (html_displayed),
  // unless the link goes there itself.
  c.scanHtml({ tags: new Set(['a']), links: [{ href: 'http://c.example/', text: 'http://a.example/x' }, { href: 'http://bshop.com', text: 'bshop.com' }], images: [], unbalanced: false });
  assert.deepEqual([...a.firstFlags].sort(), ['html_displayed']);
  assert.equal(a.count, 3);
  const target = c.urls.get('http://c.example/')!;
  assert.deepEqual([...target.firstFlags], ['url_displayed']);
  assert.deepEqual([...bare.firstFlags].sort(), ['schemaless', 'url_displayed'], 'its own link: the text flag goes, no html_displayed');
  assert.equal(bare.count, 3);
  // The Subject's URLs are recorded as shown ones.
  c.scanText('see http://d.example/', ['subject'], false, false);
  assert.deepEqual([...c.urls.get('http://d.example/')!.firstFlags].sort(), ['html_displayed', 'subject']);
});
