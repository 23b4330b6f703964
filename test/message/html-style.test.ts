import { test } from 'node:test';
import assert from 'node:assert/strict';
import { colorDistance, computeStyle, isHidden, isTransparent, parseColor, ROOT_STYLE } from '../../src/message/html-style.js';

test('colours: hex, bare hex, rgb()/rgba() in both syntaxes, names, transparent; junk is none', () => {
  assert.deepEqual(parseColor('#fff'), { r: 255, g: 255, b: 255, a: 255 });
  assert.deepEqual(parseColor('#FFFFFF80'), { r: 255, g: 255, b: 255, a: 128 });
  assert.deepEqual(parseColor('ffffff'), { r: 255, g: 255, b: 255, a: 255 });
  assert.deepEqual(parseColor('rgb(10, 20, 30)'), { r: 10, g: 20, b: 30, a: 255 });
  assert.deepEqual(parseColor('rgba(100%,0%,0%,0.5)'), { r: 255, g: 0, b: 0, a: 128 });
  assert.deepEqual(parseColor('rgb(1 2 3 / 0)'), { r: 1, g: 2, b: 3, a: 0 });
  assert.deepEqual(parseColor('White'), { r: 255, g: 255, b: 255, a: 255 });
  assert.equal(parseColor('transparent')?.a, 0);
  for (const junk of ['', '#12', 'rgb(1,2)', 'constructor', 'toString', 'zzzzzz', 'rgb(a,b,c)']) assert.equal(parseColor(junk), undefined, junk);
});

test('colour distance: black on white is far, near-white on white is not', () => {
  const w = parseColor('#fff')!;
  assert.ok(colorDistance(parseColor('#000')!, w) > 1);
  assert.ok(colorDistance(parseColor('#fefefe')!, w) < 0.1);
  assert.ok(colorDistance(parseColor('#cccccc')!, w) > 0.1);
});

test('inheritance: colours and sizes flow down, display:none cannot be undone, visibility can', () => {
  const dark = computeStyle(ROOT_STYLE, { bgcolor: '#000000' });
  assert.ok(!isTransparent(computeStyle(dark, { color: 'white' })));
  assert.ok(isTransparent(computeStyle(ROOT_STYLE, { color: 'white' })));
  // A see-through background shows the parent's.
  assert.ok(isTransparent(computeStyle(computeStyle(ROOT_STYLE, { style: 'background-color: rgba(0,0,0,0)' }), { color: '#fff' })));
  const gone = computeStyle(ROOT_STYLE, { style: 'display: none' });
  assert.ok(isHidden(computeStyle(gone, { style: 'display:block; visibility: visible' })));
  const vis = computeStyle(ROOT_STYLE, { style: 'visibility:hidden' });
  assert.ok(isHidden(vis));
  assert.ok(!isHidden(computeStyle(vis, { style: 'visibility:visible' })));
  // The inline style wins over the attribute; later declarations win; !important is read.
  assert.ok(!isTransparent(computeStyle(ROOT_STYLE, { color: '#fff', style: 'color: #000' })));
  assert.ok(isHidden(computeStyle(ROOT_STYLE, { style: 'font-size: 12px; FONT-SIZE: 0 !important' })));
  assert.ok(isHidden(computeStyle(ROOT_STYLE, { style: 'font: 0/0 a' })));
  assert.ok(!isHidden(computeStyle(ROOT_STYLE, { style: 'font: bold 10pt Arial' })));
  assert.ok(isHidden(computeStyle(ROOT_STYLE, { style: 'opacity: 0.05' })));
});
