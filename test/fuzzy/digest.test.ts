// Digests and shingles against values captured from a real Rspamd 3.4 (fixtures/controller
// fuzzyadd_* replies, and the shingles table of a 3.4 fuzzy storage after `/fuzzyadd ham.eml`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseMessage } from '../../src/message/parse-message.js';
import { DEFAULT_KEYS, SHINGLE_COUNT, fuzzyKeys, shingleSimilarity, shingles, textDigest } from '../../src/rule-libs/fuzzy/digest.js';
import { mumHash, siphash24, xxHash64 } from '../../src/rule-libs/fuzzy/fast-hash.js';
import { messageHashes } from '../../src/rule-libs/fuzzy/message-hashes.js';
import { compileRule } from '../../src/rule-libs/fuzzy/rule.js';
import { FuzzyCheckConfig } from '../../src/rule-libs/fuzzy/rule-config.js';
import { stemmedWords } from '../../src/rule-libs/fuzzy/words.js';

const MSGS = '/work/shared/fixtures/rspamd-test-messages';
const FIXTURES = '/work/shared/fixtures/controller';

/** The `hashes` of a captured /fuzzyadd reply. */
function capturedHashes(file: string): string[] {
  const text = readFileSync(`${FIXTURES}/${file}`, 'utf8');
  const m = /\{"success":true,"hashes":\[[^\]]*\]\}/.exec(text);
  assert.ok(m, `no reply body in ${file}`);
  return (JSON.parse(m[0]) as { hashes: string[] }).hashes;
}

// Shingles Rspamd 3.4 stored for ham.eml (rule defaults: algorithm old, key "rspamd"), slot 0..31.
const HAM_SHINGLES_34 = `34127538897790894 599237839317398 756767673208230 188229837953007005 143788143390502035
23897193770707458 43765662059074342 233838547209843522 214553020780852263 280407616608422706 785050463204895
11466689776197171 370351126983074176 27344889224897389 289937619467225112 51923374628578105 71887171380040033
108540189402029922 207905999415579663 18157491910698321 39789304424899420 71384240427182134 275082229354761025
15312873337219004 53517035726879541 45678415132674889 369964976910287450 64150848356781164 67563586648481122
145511688420259330 55649199761676236 67185761008392032`.split(/\s+/).map(BigInt);

// The capture's rule: Rspamd's defaults (min_bytes 1k at module level, mime_types *).
const cfg = FuzzyCheckConfig.parse({ rules: { local: { servers: '127.0.0.1', mime_types: ['*'] } } });
const rule = compileRule('local', cfg.rules['local']!, cfg);

test('hash key is BLAKE2b-512("rspamd") as the spec lists it', () => {
  assert.equal(Buffer.from(DEFAULT_KEYS.hashKey).toString('hex'),
    'ef43ae80cc8dc34c6f1bd6181bae87740ccaf78e5f2e5432f679b92726962092700785eb83f789e0d7322ad21a6441ef49ffc38c54f96774301e702eb71209fe');
  assert.equal(DEFAULT_KEYS.shingleKeys.length, SHINGLE_COUNT);
  assert.notDeepEqual(fuzzyKeys('other').hashKey, DEFAULT_KEYS.hashKey);
});

test('fast hashes match their reference vectors', () => {
  const key = Uint8Array.from({ length: 16 }, (_, i) => i);
  assert.equal(siphash24(key, new Uint8Array()), 0x726fdb47dd0e0e31n);
  assert.equal(siphash24(key, Uint8Array.from({ length: 15 }, (_, i) => i)), 0xa129ca6149be45e5n);
  assert.equal(xxHash64(new Uint8Array(), 0n), 0xef46db3751d8e999n);
  assert.equal(xxHash64(Buffer.from('Nobody inspects the spammish repetition'), 0n), 0xfbcea83c8a378bf1n);
  // mumhash: every input length class (tail only, words, unrolled blocks) gives distinct, stable values.
  const seen = new Set([1, 7, 8, 9, 31, 32, 33, 64, 100].map((n) => mumHash(Buffer.alloc(n, 0x61), 1n)));
  assert.equal(seen.size, 9);
});

test('ham.eml: digest equals the hash Rspamd 3.4 returned from /fuzzyadd', () => {
  const msg = parseMessage(readFileSync(`${MSGS}/ham.eml`));
  const hashes = messageHashes(msg, rule).map((h) => h.digest.toString('hex'));
  assert.deepEqual(hashes, capturedHashes('fuzzyadd_for_delhash.md'));
});

test('ham.eml: the 32 shingles equal the ones Rspamd 3.4 stored', () => {
  const msg = parseMessage(readFileSync(`${MSGS}/ham.eml`));
  const [h] = messageHashes(msg, rule);
  assert.ok(h?.shingles);
  assert.deepEqual(h.shingles, HAM_SHINGLES_34);
});

test('a lightly edited copy keeps most shingles; an unrelated text shares none of note', () => {
  const msg = parseMessage(readFileSync(`${MSGS}/ham.eml`));
  const text = msg.textParts[0]!.text;
  const base = stemmedWords(text);
  const edited = stemmedWords(text.replace(/^Hi Kenny/m, 'Hello there Bob').replace(/document/, 'paper'));
  assert.notEqual(textDigest(edited).toString('hex'), textDigest(base).toString('hex'));
  for (const alg of ['old', 'mumhash', 'xxhash'] as const) {
    const a = shingles(base, alg);
    assert.ok(shingleSimilarity(a, shingles(edited, alg)) > 0.5, `${alg}: edited copy should match`);
    const other = stemmedWords(parseMessage(readFileSync(`${MSGS}/spam_message.eml`)).textParts[0]!.text);
    assert.ok(shingleSimilarity(a, shingles(other, alg)) < 0.2, `${alg}: unrelated text should not match`);
  }
});
