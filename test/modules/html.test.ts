import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../../src/engine/index.js';
import { htmlChecksModule } from '../../src/modules/html-checks/index.js';
import { engineConfig, fixtureMessage, meta, names, symbol, testMessage } from './helpers.js';

const HTML_SYMBOLS = /^(HTML_SHORT_LINK_IMG_\d|R_EMPTY_IMAGE|R_SUSPICIOUS_IMAGES|EXT_CSS|HTTP_TO_HTTPS|HTTP_TO_IP|HAS_DATA_URI|DATA_URI_OBFU)$/;

async function fired(msg: Buffer, config: Record<string, unknown> = {}): Promise<string[]> {
  const e = await createEngine(engineConfig({ html_checks: config }), [htmlChecksModule]);
  return [...names(await e.scan(msg, meta()))].filter((n) => HTML_SYMBOLS.test(n)).sort();
}

function html(body: string, extraHeaders = ''): Buffer {
  return Buffer.from(
    `From: a@example.org\r\nTo: b@example.net\r\nSubject: t\r\nMIME-Version: 1.0\r\n${extraHeaders}Content-Type: text/html; charset=utf-8\r\n\r\n<html><body>${body}</body></html>\r\n`,
  );
}

const words = (n: number): string => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');

test('Rspamd suite messages', async () => {
  // A remote image inside a link, in a part with little text.
  assert.deepEqual(await fired(testMessage('html_phishing.eml')), ['HTML_SHORT_LINK_IMG_1']);
  // A 326x326 image and no text.
  assert.deepEqual(await fired(testMessage('urlimage.eml')), ['R_EMPTY_IMAGE']);
  assert.deepEqual(await fired(testMessage('numeric_urls.eml')), ['HTTP_TO_IP']);
  // <link rel="stylesheet" href="….css">.
  assert.ok((await fired(testMessage('zerofont.eml'))).includes('EXT_CSS'));
});

test('nothing fires on plain or ordinary HTML mail', async () => {
  assert.deepEqual(await fired(fixtureMessage('ham.eml')), []);
  assert.deepEqual(await fired(testMessage('newsletter.eml')), []);
  const ordinary = html(`<p>${words(150)}</p><a href="https://example.org/x">https://example.org/x</a><img src="cid:logo" width="20" height="20">`);
  assert.deepEqual(await fired(ordinary), []);
});

test('HTML_SHORT_LINK_IMG bands follow the length of the part text', async () => {
  const linked = '<a href="http://shop.example.net/"><img src="http://img.example.net/a.png"></a>';
  const text = (n: number): string => `<p>${'x'.repeat(n)}</p>`;
  assert.deepEqual(await fired(html(text(100) + linked)), ['HTML_SHORT_LINK_IMG_1']);
  assert.deepEqual(await fired(html(text(1200) + linked)), ['HTML_SHORT_LINK_IMG_2']);
  assert.deepEqual(await fired(html(text(1700) + linked)), ['HTML_SHORT_LINK_IMG_3']);
  assert.deepEqual(await fired(html(text(2100) + linked)), []);
  // Small embedded (cid:) images in links are logos; large ones count.
  assert.deepEqual(await fired(html(`${text(100)}<a href="http://x.example.net/"><img src="cid:a" width="20" height="20"></a>`)), []);
  assert.deepEqual(await fired(html(`${text(100)}<a href="http://x.example.net/"><img src="cid:a" width="200" height="100"></a>`)), ['HTML_SHORT_LINK_IMG_1', 'R_SUSPICIOUS_IMAGES']);
});

test('R_SUSPICIOUS_IMAGES: clickable pictures outweigh the words', async () => {
  const pics = Array.from({ length: 3 }, (_, i) => `<a href="http://x.example.net/${i}"><img src="http://x.example.net/${i}.png" width="600" height="400"></a>`).join('');
  const e = await createEngine(engineConfig(), [htmlChecksModule]);
  // 3 × (600+400)/100 = 30 picture words against 40 words of text: under half, no hit.
  assert.equal(symbol(await e.scan(html(`<p>${words(40)}</p>${pics}`), meta()), 'R_SUSPICIOUS_IMAGES'), undefined);
  const r2 = await e.scan(html(`<p>${words(10)}</p>${pics}`), meta());
  assert.ok(Math.abs((symbol(r2, 'R_SUSPICIOUS_IMAGES')?.score ?? 0) - 5 * (30 / 40 - 0.5) * 2) < 1e-9);
});

test('HTTP_TO_HTTPS: the text promises https, the link is http', async () => {
  assert.deepEqual(await fired(html(`<p>${words(300)}</p><a href="http://bank.example.net/">https://bank.example.net/</a>`)), ['HTTP_TO_HTTPS']);
  assert.deepEqual(await fired(html(`<p>${words(300)}</p><a href="https://bank.example.net/">https://bank.example.net/</a>`)), []);
});

test('data: URIs in the raw body: HAS_DATA_URI, and DATA_URI_OBFU for text or HTML in base64', async () => {
  const img = `<p>${words(300)}</p><img src="data:image/png;base64,iVBORw0KGgo=">`;
  assert.deepEqual(await fired(html(img)), ['HAS_DATA_URI']);
  const obfu = `<p>${words(300)}</p><a href="data:text/html;base64,PGgxPmhpPC9oMT4=">open</a>`;
  assert.deepEqual(await fired(html(obfu)), ['DATA_URI_OBFU', 'HAS_DATA_URI']);
  assert.deepEqual(await fired(html(obfu), { data_uri: false }), []);
});
