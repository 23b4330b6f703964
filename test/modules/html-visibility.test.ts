// Text a reader can't see: R_WHITE_ON_WHITE, ZERO_FONT and MANY_INVISIBLE_PARTS (Rspamd's
// rules/html.lua HTML_VISIBLE_CHECKS) through the real engine, and the hidden text kept out of
// the part's text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../../src/engine/index.js';
import { htmlChecksModule } from '../../src/modules/html-checks/index.js';
import type { ScanResult } from '../../src/plugin-api/index.js';
import { parseMessage } from '../../src/message/parse-message.js';
import { engineConfig, fixtureMessage, meta, symbol, testMessage } from './helpers.js';

const VISIBILITY = new Set(['R_WHITE_ON_WHITE', 'ZERO_FONT', 'MANY_INVISIBLE_PARTS']);

async function scan(msg: Buffer): Promise<ScanResult> {
  const e = await createEngine(engineConfig(), [htmlChecksModule]);
  return e.scan(msg, meta());
}

function fired(r: ScanResult): string[] {
  return r.symbols.map((s) => s.name).filter((n) => VISIBILITY.has(n)).sort();
}

function mail(html: string): Buffer {
  return Buffer.from(
    'From: "Deals" <offers@promo.example.net>\r\nTo: victim@example.org\r\nSubject: Your account\r\n' +
      'Date: Tue, 3 Sep 2002 10:00:00 +0000\r\nMessage-ID: <x1@promo.example.net>\r\nMIME-Version: 1.0\r\n' +
      `Content-Type: text/html; charset=us-ascii\r\n\r\n${html}\r\n`,
  );
}

// A 2002-style pitch padded with a word salad in white on the white page, to dilute the pitch
// for word-counting filters: most of the text is invisible.
const SALAD = 'lantern orchard pebble quarry meadow saddle timber velvet walnut harbor canyon';
const WHITE_SALAD = mail(
  '<html><body bgcolor="#FFFFFF"><table width="600"><tr><td>' +
    '<p>Get your <b>FREE</b> quote today and save up to 60% on your mortgage.</p>' +
    '<p><a href="http://cheap-rates.example.com/apply">Apply now</a></p>' +
    `<font color="#ffffff">${SALAD}</font><font color="white">${SALAD}</font><span style="color: rgb(254,254,254)">${SALAD}</span>` +
    '</td></tr></table></body></html>',
);

test('white text on the white page: R_WHITE_ON_WHITE by its share of the text, MANY_INVISIBLE_PARTS by its blocks', async () => {
  const r = await scan(WHITE_SALAD);
  assert.deepEqual(fired(r), ['MANY_INVISIBLE_PARTS', 'R_WHITE_ON_WHITE']);
  // Over half the text is white: full strength (4.0), the option names the block.
  assert.equal(symbol(r, 'R_WHITE_ON_WHITE')?.score, 4);
  assert.match(symbol(r, 'R_WHITE_ON_WHITE')!.options![0]!, /^(font|span) color #f[ef]f[ef]f[ef] bgcolor #ffffff$/);
  // Three blocks: 0.2 of the weight, the count as option.
  assert.deepEqual(symbol(r, 'MANY_INVISIBLE_PARTS')?.options, ['3']);
  assert.ok(Math.abs(symbol(r, 'MANY_INVISIBLE_PARTS')!.score - 0.2) < 1e-9);
  // Low-contrast text is still in the part's text (a reader could select it).
  assert.match(parseMessage(WHITE_SALAD).textParts[0]!.text, /lantern orchard/);
});

test('white text on a dark cell, and dark text on a white one, are visible: no hit', async () => {
  const newsletter = mail(
    '<html><body><table width="600"><tr><td bgcolor="#003366"><font color="#ffffff">Weekly digest: the release notes</font></td></tr>' +
      '<tr><td style="background-color: white"><span style="color:#333">Version 2.1 is out with many fixes.</span></td></tr>' +
      '<tr><td style="background:#1a1a1a url(x.gif) no-repeat"><span style="color:#eee">Unsubscribe at any time.</span></td></tr></table></body></html>',
  );
  assert.deepEqual(fired(await scan(newsletter)), []);
  assert.deepEqual(fired(await scan(fixtureMessage('ham.eml'))), []);
  assert.deepEqual(fired(await scan(testMessage('newsletter.eml'))), []);
});

test('a little white text among much visible text stays under the share threshold', async () => {
  const words = Array.from({ length: 200 }, (_, i) => `word${i}`).join(' ');
  const r = await scan(mail(`<html><body><p>${words}</p><p><font color="#fff">spacer</font></p></body></html>`));
  // One low-contrast block counts as invisible, but 6 characters of ~1 500 are no white-on-white.
  assert.deepEqual(fired(r), ['MANY_INVISIBLE_PARTS']);
});

test("Rspamd's zerofont.eml: zero-sized spans split words (ZERO_FONT, MANY_INVISIBLE_PARTS)", async () => {
  const msg = testMessage('zerofont.eml');
  const r = await scan(msg);
  assert.deepEqual(fired(r), ['MANY_INVISIBLE_PARTS', 'ZERO_FONT']);
  assert.deepEqual(symbol(r, 'ZERO_FONT')?.options, ['2']);
  assert.ok(Math.abs(symbol(r, 'ZERO_FONT')!.score - 0.2) < 1e-9);
  // The reader sees "fish", so does every rule that reads the text.
  const text = parseMessage(msg).textParts[0]!.text;
  assert.match(text, /\bfish\b/);
  assert.doesNotMatch(text, /sharing/);
});

test('display:none, visibility:hidden, opacity 0 and the hidden attribute hide text from rules', async () => {
  const msg = mail(
    '<html><body><p>Your parcel is waiting, confirm delivery.</p>' +
      '<div style="display:none">invoice receipt meeting agenda</div>' +
      '<div style="visibility: hidden">quarterly report attached</div>' +
      '<p style="opacity:0">family photos weekend</p>' +
      '<span hidden>project schedule</span>' +
      '<div style="display:none"><p style="display:block">child cannot show itself</p></div>' +
      '<div style="visibility:hidden"><span style="visibility:visible">shown again</span></div>' +
      '</body></html>',
  );
  const part = parseMessage(msg).textParts[0]!;
  assert.doesNotMatch(part.text, /invoice|quarterly|family|schedule|child cannot/);
  assert.match(part.text, /Your parcel is waiting/);
  assert.match(part.text, /shown again/);
  assert.ok((part.html?.hiddenChars ?? 0) > 60);
  const r = await scan(msg);
  assert.deepEqual(fired(r), ['MANY_INVISIBLE_PARTS']);
  // Five hidden leaf blocks: div, div, p, span, p (the span shown again is no hidden block).
  assert.deepEqual(symbol(r, 'MANY_INVISIBLE_PARTS')?.options, ['5']);
});

test('more than ten zero-font blocks: ZERO_FONT at full strength', async () => {
  const letters = 'Congratulations you won'.split('').map((c) => `${c}<span style="font-size:0px">x</span>`).join('');
  const r = await scan(mail(`<html><body><div>${letters}</div></body></html>`));
  assert.equal(symbol(r, 'ZERO_FONT')?.score, 1);
  assert.equal(symbol(r, 'MANY_INVISIBLE_PARTS')?.score, 1);
  // Relative sizes follow the parent: 0.01em of 16px is under a pixel, 50% of 16px is not.
  const rel = await scan(mail('<html><body><div style="font-size:16px"><span style="font-size:0.01em">a</span><span style="font-size:50%">b</span></div></body></html>'));
  assert.deepEqual(symbol(rel, 'ZERO_FONT')?.options, ['1']);
});
