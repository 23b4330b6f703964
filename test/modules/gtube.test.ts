import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fixtureMessage, meta, names, scanner, symbol } from './helpers.js';
import { findGtube, GTUBE_SCAN_BYTES } from '../../src/modules/gtube/check.js';

const gtube = fixtureMessage('gtube.eml');
/** The same message with the pattern's first letter changed (Y = add header, Z = rewrite subject, A = no action). */
const variant = (letter: string): Buffer =>
  Buffer.from(gtube.toString('latin1').replaceAll('XJS*C4JDBQADN1', `${letter}JS*C4JDBQADN1`), 'latin1');

test('GTUBE message is rejected through a pre-result and skipped', async () => {
  const r = await (await scanner()).scan(gtube, meta());
  assert.equal(r.action, 'reject');
  assert.equal(r.isSkipped, true);
  assert.equal(r.messages['smtp_message'], 'Gtube pattern');
  assert.equal(r.passthroughModule, 'GTUBE');
  assert.equal(symbol(r, 'GTUBE')?.score, 0);
  // Like Rspamd 3.4 (fixture a02): a skipped task has no milter block.
  assert.equal(r.milter, undefined);
});

test('Y/Z/A variants act only with gtube_patterns: all', async () => {
  const plain = await scanner();
  const all = await scanner({ gtube: { gtube_patterns: 'all' } });
  for (const [letter, action] of [
    ['Y', 'add header'],
    ['Z', 'rewrite subject'],
    ['A', 'no action'],
  ] as const) {
    const msg = variant(letter);
    assert.ok(!names(await plain.scan(msg, meta())).has('GTUBE'), `${letter} must not fire by default`);
    const r = await all.scan(msg, meta());
    assert.ok(names(r).has('GTUBE'), `${letter} fires with all`);
    assert.equal(r.action, action);
  }
});

test('gtube_patterns: disabled switches the module off', async () => {
  const r = await (await scanner({ gtube: { gtube_patterns: 'disabled' } })).scan(gtube, meta());
  assert.ok(!names(r).has('GTUBE'));
  assert.notEqual(r.action, 'reject');
});

test('pattern beyond the scanned prefix of a part is ignored', () => {
  const pattern = 'XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X';
  assert.equal(findGtube(`hello ${pattern}`, false), 'reject');
  assert.equal(findGtube(`${'a'.repeat(GTUBE_SCAN_BYTES)}${pattern}`, false), undefined);
  assert.equal(findGtube(pattern.slice(1), false), undefined);
});
