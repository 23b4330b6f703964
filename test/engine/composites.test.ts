import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defineModule } from '../../src/plugin-api/index.js';
import type { CompositeDef } from '../../src/plugin-api/index.js';
import { parseExpression } from '../../src/rule-libs/expression/composite-expr.js';
import { engineWith, fixtureMessage, fixtureRules, fixtureGroups, meta, symbolNames, sym } from './helpers.js';

const SPAM = fixtureMessage('spam_message.eml'); // MISSING_MID, MISSING_TO, FROM_HAS_DN, DATE_IN_PAST, OLD_X_MAILER, MIME_GOOD
const CRLF = fixtureMessage('crlf-simple.eml'); // FROM_HAS_DN, DATE_IN_PAST, SPAM_FLAG, MIME_GOOD

/** A postfilter that inserts LATE_SYM, for the second composites pass. */
const late = defineModule({
  name: 'late',
  symbols: { LATE_SYM: { score: 0.5, group: 'late' } },
  setup(ctx) {
    ctx.symbol({ name: 'LATE', stage: 'postfilters', inserts: ['LATE_SYM'], check: (t) => t.insert('LATE_SYM') });
  },
});

async function run(composites: CompositeDef[], message = SPAM) {
  const engine = await engineWith([fixtureRules, late], { composites, groups: fixtureGroups });
  return engine.scan(message, meta());
}

test('& | ! and parentheses', async () => {
  const r = await run([
    { name: 'C_AND', expression: 'MISSING_MID & MISSING_TO', score: 1, policy: 'leave' },
    { name: 'C_AND_NO', expression: 'MISSING_MID & SPAM_FLAG', score: 1, policy: 'leave' },
    { name: 'C_OR', expression: 'SPAM_FLAG | OLD_X_MAILER', score: 1, policy: 'leave' },
    { name: 'C_NOT', expression: '!SPAM_FLAG', score: 1, policy: 'leave' },
    { name: 'C_PAREN', expression: '!(SPAM_FLAG | MISSING_MID) | (MISSING_TO and not SPAM_FLAG)', score: 1, policy: 'leave' },
    { name: 'C_WORDS', expression: 'MISSING_MID && (SPAM_FLAG || MISSING_TO)', score: 1, policy: 'leave' },
  ]);
  const names = symbolNames(r);
  for (const yes of ['C_AND', 'C_OR', 'C_NOT', 'C_PAREN', 'C_WORDS']) assert.ok(names.includes(yes), yes);
  assert.ok(!names.includes('C_AND_NO'));
  assert.equal(sym(r, 'C_AND')?.score, 1);
});

test('default policy removes the atoms; ~ keeps the symbol, - keeps everything, ^ forces removal', async () => {
  const r = await run([
    { name: 'REMOVE_ALL', expression: 'MISSING_MID & OLD_X_MAILER', score: 3 },
    { name: 'TILDE', expression: '~MISSING_TO & FROM_HAS_DN', score: 0, policy: 'remove_all' },
    { name: 'MINUS', expression: '-DATE_IN_PAST & MIME_GOOD', score: 0 },
  ]);
  const names = symbolNames(r);
  // MISSING_MID and OLD_X_MAILER hidden, their weight removed.
  assert.ok(!names.includes('MISSING_MID') && !names.includes('OLD_X_MAILER'));
  // ~: symbol stays visible, weight removed.
  assert.equal(sym(r, 'MISSING_TO')?.score, 0);
  assert.ok(!names.includes('FROM_HAS_DN'));
  // -: untouched; MIME_GOOD (no modifier) removed.
  assert.equal(sym(r, 'DATE_IN_PAST')?.score, 1);
  assert.ok(!names.includes('MIME_GOOD'));
  // 3 (composite) + 1 (DATE_IN_PAST) + 0.5 (LATE_SYM); everything else removed.
  assert.equal(Math.round(r.score * 100) / 100, 4.5);

  const forced = await run([
    { name: 'KEEPER', expression: 'MISSING_MID', score: 0, policy: 'leave' },
    { name: 'FORCER', expression: '^MISSING_MID', score: 0, policy: 'leave' },
  ]);
  assert.equal(sym(forced, 'MISSING_MID'), undefined);
});

test('removal needs every matching composite to agree, and ignores atoms under !', async () => {
  const r = await run([
    { name: 'WANTS_REMOVAL', expression: 'MISSING_MID', score: 0, policy: 'remove_all' },
    { name: 'WANTS_TO_KEEP', expression: 'MISSING_MID & FROM_HAS_DN', score: 0, policy: 'leave' },
    { name: 'NEGATED', expression: '!(MISSING_TO & SPAM_FLAG)', score: 0, policy: 'remove_all' },
  ]);
  assert.equal(sym(r, 'MISSING_MID')?.score, 2.5);
  // FROM_HAS_DN: one composite leaves it, the other does not mention it.
  assert.ok(sym(r, 'FROM_HAS_DN'));
  // MISSING_TO sits under ! in NEGATED: not removed.
  assert.equal(sym(r, 'MISSING_TO')?.score, 2);
  assert.ok(sym(r, 'NEGATED'));
});

test('every present atom of an | is removed, not only the first (Rspamd evaluates composites without a short cut)', async () => {
  const r = await run([{ name: 'EITHER', expression: 'MISSING_MID & (MISSING_TO | OLD_X_MAILER | SPAM_FLAG)', score: 0 }]);
  assert.ok(sym(r, 'EITHER'));
  for (const gone of ['MISSING_MID', 'MISSING_TO', 'OLD_X_MAILER']) assert.equal(sym(r, gone), undefined, gone);
  // A composite that does not match removes nothing, whatever its | found.
  const none = await run([{ name: 'NEITHER', expression: 'SPAM_FLAG & (MISSING_TO | OLD_X_MAILER)', score: 0 }]);
  assert.ok(!sym(none, 'NEITHER') && sym(none, 'MISSING_TO') && sym(none, 'OLD_X_MAILER'));
});

test('remove_symbol and remove_weight policies', async () => {
  const r = await run([
    { name: 'HIDE', expression: 'MISSING_MID', score: 0, policy: 'remove_symbol' },
    { name: 'ZERO', expression: 'MISSING_TO', score: 0, policy: 'remove_weight' },
  ]);
  assert.equal(sym(r, 'MISSING_MID'), undefined);
  assert.equal(sym(r, 'MISSING_TO')?.score, 0);
  // remove_symbol keeps the weight in the total: 2.5 + 1 + 2 - 0.1 + 0.5 (MISSING_TO weight removed).
  assert.equal(Math.round(r.score * 100) / 100, 5.9);
});

test('group atoms g:, g+:, g-: and option filters', async () => {
  const r = await run([
    { name: 'ANY_HEADERS', expression: 'g:headers & g:mime_types', score: 0, policy: 'leave' },
    { name: 'POS_MIME', expression: 'g+:mime_types', score: 0, policy: 'leave' },
    { name: 'NEG_MIME', expression: 'g-:mime_types', score: 0, policy: 'leave' },
    { name: 'OPT_EXACT', expression: 'MIME_GOOD[text/plain]', score: 0, policy: 'leave' },
    { name: 'OPT_RE', expression: 'MIME_GOOD[/^text\\//]', score: 0, policy: 'leave' },
    { name: 'OPT_MISS', expression: 'MIME_GOOD[text/html]', score: 0, policy: 'leave' },
  ]);
  const names = symbolNames(r);
  assert.ok(names.includes('ANY_HEADERS'));
  assert.ok(!names.includes('POS_MIME'));
  assert.ok(names.includes('NEG_MIME'));
  assert.ok(names.includes('OPT_EXACT') && names.includes('OPT_RE'));
  assert.ok(!names.includes('OPT_MISS'));
});

test('arithmetic and comparisons compare scores', async () => {
  const r = await run([
    { name: 'SUM_HIGH', expression: 'MISSING_MID + MISSING_TO >= 4', score: 0, policy: 'leave' },
    { name: 'SUM_LOW', expression: 'MISSING_MID + MISSING_TO > 5', score: 0, policy: 'leave' },
  ]);
  assert.ok(sym(r, 'SUM_HIGH'));
  assert.equal(sym(r, 'SUM_LOW'), undefined);
});

test('composites referencing composites and postfilter symbols (second pass)', async () => {
  const r = await run(
    [
      { name: 'OUTER', expression: 'INNER & SPAM_FLAG', score: 1, policy: 'leave' },
      { name: 'INNER', expression: 'FROM_HAS_DN', score: 0.5, policy: 'leave' },
      { name: 'AFTER_POST', expression: 'LATE_SYM & SPAM_FLAG', score: 2, policy: 'leave' },
    ],
    CRLF,
  );
  assert.ok(sym(r, 'INNER'));
  assert.ok(sym(r, 'OUTER'));
  assert.equal(sym(r, 'AFTER_POST')?.score, 2);
});

test('composite disabled by settings is not evaluated; bad expressions fail at start', async () => {
  const engine = await engineWith([fixtureRules], { composites: [{ name: 'CMP', expression: 'MISSING_MID', score: 1 }] });
  const r = await engine.scan(SPAM, meta({ settings: { symbols_disabled: ['CMP'] } }));
  assert.equal(sym(r, 'CMP'), undefined);
  assert.ok(sym(r, 'MISSING_MID'));
  await assert.rejects(engineWith([fixtureRules], { composites: [{ name: 'BAD', expression: 'A & (B | ' }] }), /composite BAD/);
  assert.throws(() => parseExpression('A &'), /end of expression/);
});
