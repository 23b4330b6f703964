// bitcoin module: wallet addresses found by checksum (Rspamd rules/bitcoin.lua, with bech32m and
// EIP-55 added), the scam words beside them, and the LEAKED_PASSWORD_SCAM composite they feed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../../src/engine/index.js';
import { bitcoinModule } from '../../src/modules/bitcoin/index.js';
import { builtinModules } from '../../src/modules/index.js';
import { isBase58CheckAddress, isCashAddress, isEthereumAddress, isSegwitAddress } from '../../src/modules/bitcoin/validate.js';
import { MAX_CANDIDATES } from '../../src/modules/bitcoin/check.js';
import { engineConfig, fixtureMessage, meta, names, symbol, testMessage } from './helpers.js';

test('checksums: published addresses pass, one changed character fails', () => {
  // Legacy P2PKH (the genesis block's), P2SH (BIP 13's example).
  assert.ok(isBase58CheckAddress('1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa'));
  assert.ok(!isBase58CheckAddress('1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb'));
  assert.ok(isBase58CheckAddress('3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy'));
  assert.ok(!isBase58CheckAddress('3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLz'));
  // Segwit v0 (bech32) and BIP 350's taproot example (bech32m); the same v1 data with a bech32
  // checksum is BIP 350's "invalid checksum" case.
  assert.ok(isSegwitAddress('bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq'));
  assert.ok(isSegwitAddress('BC1QAR0SRRR7XFKVY5L643LYDNW9RE59GTZZWF5MDQ'));
  assert.ok(!isSegwitAddress('bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdr'));
  assert.ok(!isSegwitAddress('bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mDQ'), 'mixed case');
  assert.ok(isSegwitAddress('bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0'));
  assert.ok(!isSegwitAddress('bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd'));
  // cashaddr: the spec's example, with and without its prefix.
  assert.ok(isCashAddress('bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a'));
  assert.ok(isCashAddress('qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a'));
  assert.ok(!isCashAddress('bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6b'));
  assert.ok(!isCashAddress('bchtest:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a'), 'the prefix is part of the checksum');
  // EIP-55's examples; a letter in the wrong case fails, and all-lower-case has no checksum.
  for (const a of ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB', '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb']) {
    assert.ok(isEthereumAddress(a), a);
  }
  assert.ok(!isEthereumAddress('0x5aaeb6053F3E94C9b9A09f33669435E7Ef1BeAed'));
  assert.ok(!isEthereumAddress('0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed'));
});

test("Rspamd's suite messages: BITCOIN_ADDR with every address as an option", async () => {
  const e = await createEngine(engineConfig(), [bitcoinModule]);
  for (const f of ['btc.eml', 'btc2.eml', 'btc3.eml']) assert.ok(names(await e.scan(testMessage(f), meta())).has('BITCOIN_ADDR'), f);
  const r = await e.scan(testMessage('btc4.eml'), meta());
  assert.deepEqual([...(symbol(r, 'BITCOIN_ADDR')?.options ?? [])].sort(), [
    '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2',
    'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
    'bitcoincash:qztslqhavnjcgth9zwu6dw0jjcfy4zahfy7vf0smwp',
  ]);
});

function mail(body: string, headers = ''): Buffer {
  return Buffer.from(`From: "Hacker" <x9f3@example.net>\r\nTo: victim@example.org\r\nSubject: Security Alert\r\nDate: Mon, 3 Jun 2024 10:00:00 +0000\r\nMessage-ID: <a1@example.net>\r\nMIME-Version: 1.0\r\n${headers}Content-Type: text/plain; charset=utf-8\r\n\r\n${body}\r\n`);
}

const SEXTORTION = `Hello!

I know your password: hunter2. I installed malware on the adult video site you visited, and your
webcam recorded you. If you want me to delete the video, send $1450 in Bitcoin to my wallet:

bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq

You have 48 hours. Do not reply to this mail.`;

test('a sextortion demand: BITCOIN_ADDR, LEAKED_PASSWORD_SCAM_RE and the 7-point composite', async () => {
  const e = await createEngine(engineConfig(), builtinModules);
  const r = await e.scan(mail(SEXTORTION), meta());
  assert.deepEqual(symbol(r, 'BITCOIN_ADDR')?.options, ['bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq']);
  assert.deepEqual(symbol(r, 'LEAKED_PASSWORD_SCAM_RE')?.options, ['password']);
  assert.equal(symbol(r, 'LEAKED_PASSWORD_SCAM')?.score, 7);
  // The same demand to an Ethereum wallet.
  const eth = await e.scan(mail(SEXTORTION.replace(/bc1\w+/, '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed')), meta());
  assert.ok(names(eth).has('ETHEREUM_ADDR') && names(eth).has('LEAKED_PASSWORD_SCAM'));
});

test('misses: a near-miss address, a donation link without scam words, ordinary mail', async () => {
  const e = await createEngine(engineConfig(), builtinModules);
  // One character changed: the checksum fails, nothing fires.
  const typo = await e.scan(mail(SEXTORTION.replace('wf5mdq', 'wf5mdr')), meta());
  assert.ok(!names(typo).has('BITCOIN_ADDR') && !names(typo).has('LEAKED_PASSWORD_SCAM'));
  // A project's donation address: the address alone is not a scam.
  const donate = await e.scan(mail('Thanks for using our library. Donations: 1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2'), meta());
  assert.ok(names(donate).has('BITCOIN_ADDR'));
  assert.ok(!names(donate).has('LEAKED_PASSWORD_SCAM_RE') && !names(donate).has('LEAKED_PASSWORD_SCAM'));
  // Base58 look-alikes in ordinary mail (message ids, tracking codes) and 40 hex digits of a hash.
  const shapes = await e.scan(mail('Ticket 1Zx9AbCdEfGhJkLmNpQrStUvWxYz12345 and commit 0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed'), meta());
  assert.ok(!names(shapes).has('BITCOIN_ADDR') && !names(shapes).has('ETHEREUM_ADDR'));
  const ham = await e.scan(fixtureMessage('ham.eml'), meta());
  assert.ok(!names(ham).has('BITCOIN_ADDR'));
});

test('the scam signs beside an address: a List-Unsubscribe header on a demand counts as Rspamd counts it', async () => {
  const e = await createEngine(engineConfig(), [bitcoinModule]);
  const r = await e.scan(mail('Pay 0.1 BTC to 3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy now.', 'List-Unsubscribe: <mailto:u@example.net>\r\n'), meta());
  assert.deepEqual(symbol(r, 'LEAKED_PASSWORD_SCAM_RE')?.options, ['list_unsubscribe']);
});

test('a body of thousands of look-alikes validates at most MAX_CANDIDATES of them', async () => {
  const e = await createEngine(engineConfig(), [bitcoinModule]);
  // Each look-alike fails its checksum; the real address after the cap is not reached.
  const junk = Array.from({ length: 5000 }, (_, i) => `1${'A'.repeat(24)}${String(i).padStart(5, '1').replace(/0/g, '2')}`).join(' ');
  const t0 = performance.now();
  const r = await e.scan(mail(`${junk}\n1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2`), meta());
  assert.ok(performance.now() - t0 < 2000);
  assert.ok(!names(r).has('BITCOIN_ADDR'), `the address past ${MAX_CANDIDATES} candidates is not checked`);
});
