import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { sealMessage } from 'mailauth/lib/arc/index.js';
import { startDnsServer } from '../helpers/dns-server.js';
import type { DnsTestServer } from '../helpers/dns-server.js';
import { startFaultyDns } from '../helpers/faulty-dns.js';
import { authEngine, ed25519Key, message, meta, names, rsaKey, sign, symbolMap } from './auth-helpers.js';
import type { AuthEngine, TestKey } from './auth-helpers.js';

let dns: DnsTestServer;
let ae: AuthEngine;
let rsa: TestKey;
let ed: TestKey;
let other: TestKey;
let sealer: TestKey;

before(async () => {
  rsa = rsaKey();
  ed = ed25519Key();
  other = rsaKey();
  sealer = rsaKey();
  dns = await startDnsServer({
    zone: {
      'sel._domainkey.example.org': [{ type: 'TXT', data: rsa.record }],
      'ed._domainkey.example.org': [{ type: 'TXT', data: ed.record }],
      'revoked._domainkey.example.org': [{ type: 'TXT', data: 'v=DKIM1; k=rsa; p=' }],
      'slow._domainkey.example.org': [{ type: 'TXT', data: rsa.record }],
      'arc._domainkey.forwarder.example.net': [{ type: 'TXT', data: sealer.record }],
      'arcslow._domainkey.forwarder.example.net': [{ type: 'TXT', data: sealer.record }],
      // RFC 8463 appendix A's Ed25519 key, which signed Rspamd's ed25519*.eml test messages.
      'brisbane._domainkey.football.example.com': [{ type: 'TXT', data: 'v=DKIM1; k=ed25519; p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=' }],
    },
  });
  dns.withheld.add('slow._domainkey.example.org');
  dns.withheld.add('arcslow._domainkey.forwarder.example.net');
  ae = await authEngine(dns.address, { taskTimeout: 2 });
});

after(async () => {
  await ae.net.close();
  await dns.close();
});

const scan = (m: Buffer) => ae.engine.scan(m, meta({ ip: '192.0.2.10', from: 'user@example.org', helo: 'mta.example.org' }));

test('DKIM: valid RSA signature, valid Ed25519 signature', async () => {
  const r = await scan(await sign(message('user@example.org'), 'example.org', 'sel', rsa));
  assert.deepEqual(names(r, /DKIM/), ['DKIM_TRACE', 'R_DKIM_ALLOW']);
  assert.deepEqual(symbolMap(r).R_DKIM_ALLOW, ['example.org:s=sel']);
  assert.deepEqual(symbolMap(r).DKIM_TRACE, ['example.org:+']);
  const e = await scan(await sign(message('user@example.org'), 'example.org', 'ed', ed, 'ed25519-sha256'));
  assert.deepEqual(names(e, /^R_DKIM/), ['R_DKIM_ALLOW']);
  assert.deepEqual(symbolMap(e).R_DKIM_ALLOW, ['example.org:s=ed']);
});

test("DKIM: Rspamd's suite messages ed25519.eml (RFC 8463 example) verifies, ed25519-broken.eml rejects", async () => {
  const dir = '/work/shared/fixtures/rspamd-test-messages';
  const good = await scan(readFileSync(`${dir}/ed25519.eml`));
  // Its second signature (RSA, s=test) has no key in our zone: a permanent failure beside the pass.
  assert.deepEqual(symbolMap(good).R_DKIM_ALLOW, ['football.example.com:s=brisbane']);
  assert.deepEqual(names(good, /^R_DKIM/), ['R_DKIM_ALLOW', 'R_DKIM_PERMFAIL']);
  const broken = await scan(readFileSync(`${dir}/ed25519-broken.eml`));
  assert.deepEqual(symbolMap(broken).R_DKIM_REJECT, ['football.example.com:s=brisbane']);
});

test('DKIM: altered body or wrong key rejects; revoked or missing key is a permfail; withheld key a tempfail', async () => {
  const signed = (await sign(message('user@example.org'), 'example.org', 'sel', rsa)).toString();
  const altered = await scan(Buffer.from(signed.replace('this is a test message.', 'this is an altered message.')));
  assert.deepEqual(names(altered, /^R_DKIM/), ['R_DKIM_REJECT']);
  assert.deepEqual(symbolMap(altered).DKIM_TRACE, ['example.org:-']);
  const wrongKey = await scan(await sign(message('user@example.org'), 'example.org', 'sel', other));
  assert.deepEqual(names(wrongKey, /^R_DKIM/), ['R_DKIM_REJECT']);
  const revoked = await scan(await sign(message('user@example.org'), 'example.org', 'revoked', rsa));
  assert.deepEqual(names(revoked, /^R_DKIM/), ['R_DKIM_PERMFAIL']);
  const missing = await scan(await sign(message('user@example.org'), 'example.org', 'nokey', rsa));
  assert.deepEqual(names(missing, /^R_DKIM/), ['R_DKIM_PERMFAIL']);
  const slow = await scan(await sign(message('user@example.org'), 'example.org', 'slow', rsa));
  assert.deepEqual(names(slow, /^R_DKIM/), ['R_DKIM_TEMPFAIL']);
});

test('DKIM: no signature is R_DKIM_NA, two signatures give both results', async () => {
  assert.deepEqual(names(await scan(message('user@example.org')), /^R_DKIM/), ['R_DKIM_NA']);
  const once = await sign(message('user@example.org'), 'example.org', 'sel', rsa);
  const twice = await sign(once, 'example.org', 'nokey', rsa);
  const r = await scan(twice);
  assert.deepEqual(names(r, /^R_DKIM/), ['R_DKIM_ALLOW', 'R_DKIM_PERMFAIL']);
  assert.deepEqual(symbolMap(r).DKIM_TRACE?.sort(), ['example.org:+', 'example.org:~']);
});

async function seal(msg: Buffer, cv: 'none' | 'pass' | 'fail', selector = 'arc'): Promise<Buffer> {
  const headers = await sealMessage(msg, { signingDomain: 'forwarder.example.net', selector, privateKey: sealer.privatePem, authResults: 'forwarder.example.net; spf=pass smtp.mailfrom=example.org', cv } as never);
  return Buffer.concat([headers, msg]);
}

test('ARC: none, a valid chain of one and of two, a broken chain, missing seal key', async () => {
  assert.deepEqual(names(await scan(message('user@example.org')), /^ARC_/), ['ARC_NA']);
  const one = await seal(await sign(message('user@example.org'), 'example.org', 'sel', rsa), 'none');
  const r1 = await scan(one);
  assert.deepEqual(names(r1, /^ARC_/), ['ARC_ALLOW']);
  assert.deepEqual(symbolMap(r1).ARC_ALLOW, ['i=1']);
  const two = await seal(one, 'pass');
  const r2 = await scan(two);
  assert.deepEqual(names(r2, /^ARC_/), ['ARC_ALLOW']);
  assert.deepEqual(symbolMap(r2).ARC_ALLOW, ['i=2']);
  const tampered = Buffer.from(two.toString().replace('this is a test message.', 'this is a forged message.'));
  assert.deepEqual(names(await scan(tampered), /^ARC_/), ['ARC_REJECT']);
  // i=2 seal claiming i=3: the chain's instances no longer count up.
  const badInstance = Buffer.from(two.toString().replace(/ARC-Seal: i=2/, 'ARC-Seal: i=3'));
  assert.deepEqual(names(await scan(badInstance), /^ARC_/), ['ARC_INVALID']);
  assert.deepEqual(names(await scan(await seal(message('user@example.org'), 'none', 'arcslow')), /^ARC_/), ['ARC_DNSFAIL']);
});

test('ARC and DKIM: a resolver answering garbage (FORMERR) is a DNS failure of both, not a rejected chain', async () => {
  const faulty = await startFaultyDns('truncated-tcp-garbage');
  const fe = await authEngine(faulty.address, { taskTimeout: 3 });
  try {
    const sealed = await seal(await sign(message('user@example.org'), 'example.org', 'sel', rsa), 'none');
    const r = await fe.engine.scan(sealed, meta({ ip: '192.0.2.10', from: 'user@example.org', helo: 'mta.example.org' }));
    assert.deepEqual(names(r, /^ARC_/), ['ARC_DNSFAIL']);
    assert.deepEqual(names(r, /^R_DKIM/), ['R_DKIM_TEMPFAIL']);
  } finally {
    await fe.net.close();
    await faulty.close();
  }
});

test('ARC sealing: our seal on signed mail validates, and a second hop extends the chain', async () => {
  const { engine: sealing, net: sealNet } = await authEngine(dns.address, {
    taskTimeout: 2,
    modules: { arc: { seal: { domain: 'forwarder.example.net', selector: 'arc', key: sealer.privatePem, authserv_id: 'fwd.example.net' } } },
  });
  try {
    const hop = async (msg: Buffer): Promise<{ sealed: Buffer; symbols: Record<string, string[]> }> => {
      const r = await sealing.scan(msg, meta({ ip: '192.0.2.10', from: 'user@example.org', helo: 'mta.example.org' }));
      const add = r.milter?.add_headers ?? {};
      const val = (n: string): string => {
        const v = add[n];
        assert.ok(v && !Array.isArray(v) && typeof v === 'object', `${n} added`);
        return v.value;
      };
      const set = `ARC-Seal: ${val('ARC-Seal')}\r\nARC-Message-Signature: ${val('ARC-Message-Signature')}\r\nARC-Authentication-Results: ${val('ARC-Authentication-Results')}\r\n`;
      return { sealed: Buffer.concat([Buffer.from(set), msg]), symbols: symbolMap(r) };
    };
    const first = await hop(await sign(message('user@example.org'), 'example.org', 'sel', rsa));
    assert.deepEqual(first.symbols.ARC_SIGNED, ['forwarder.example.net:s=arc:i=1']);
    assert.match(first.sealed.toString(), /ARC-Authentication-Results: i=1; fwd\.example\.net; dkim=pass header\.d=example\.org header\.s=sel/);
    const v1 = await scan(first.sealed);
    assert.deepEqual(symbolMap(v1).ARC_ALLOW, ['i=1']);
    const second = await hop(first.sealed);
    assert.deepEqual(second.symbols.ARC_SIGNED, ['forwarder.example.net:s=arc:i=2']);
    assert.deepEqual(symbolMap(await scan(second.sealed)).ARC_ALLOW, ['i=2']);
    // A broken chain is not extended.
    const broken = Buffer.from(first.sealed.toString().replace('this is a test message.', 'this is a forged message.'));
    const r = await sealing.scan(broken, meta({ ip: '192.0.2.10', from: 'user@example.org' }));
    assert.equal(symbolMap(r).ARC_SIGNED, undefined);
    assert.deepEqual(names(r, /^ARC_/), ['ARC_REJECT']);
  } finally {
    await sealNet.close();
  }
});

/** `count` DKIM-Signature headers whose keys are not published (each would be a permfail). */
function junkSignatures(count: number): string {
  let s = '';
  for (let i = 0; i < count; i++) {
    s += `DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=junk${i}.example; s=sel; h=from:to:subject; bh=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=; b=dGVzdA==\r\n`;
  }
  return s;
}

test('DKIM: the first max_sigs (5, as Rspamd) signatures are verified; DKIM_SIGS_SKIPPED says how many were not', async () => {
  const signed = await sign(message('user@example.org'), 'example.org', 'sel', rsa);
  const text = signed.toString('latin1');
  const at = text.indexOf('From: ');
  // The good signature first, then 1 000 that name keys nobody published.
  const r = await scan(Buffer.from(`${text.slice(0, at)}${junkSignatures(1000)}${text.slice(at)}`, 'latin1'));
  assert.deepEqual(symbolMap(r).R_DKIM_ALLOW, ['example.org:s=sel']);
  // The next four were checked: their body hash is the empty body's.
  assert.deepEqual(symbolMap(r).R_DKIM_REJECT, ['junk0.example:s=sel', 'junk1.example:s=sel', 'junk2.example:s=sel', 'junk3.example:s=sel']);
  assert.equal(symbolMap(r).DKIM_TRACE?.length, 5);
  assert.deepEqual(symbolMap(r).DKIM_SIGS_SKIPPED, ['996 signatures not checked (max_sigs 5)']);
  // 20 000 signatures (10 s of CPU before the cap): past MAX_HEADERS the block is not read, and
  // the count says there may be more.
  const cpu = process.cpuUsage();
  const flood = await scan(Buffer.from(`${junkSignatures(20_000)}${text}`, 'latin1'));
  const used = process.cpuUsage(cpu);
  assert.ok(used.user + used.system < 2_000_000, `${used.user + used.system} µs of CPU`);
  assert.match(symbolMap(flood).DKIM_SIGS_SKIPPED?.[0] ?? '', /^2043\+ signatures not checked \(max_sigs 5\)$/);
  assert.ok(!names(flood, /^R_DKIM_ALLOW/).length, 'the good signature is far below the first five');
  // Five or fewer: nothing skipped, nothing said.
  assert.equal(symbolMap(await scan(Buffer.from(`${junkSignatures(3)}${text}`, 'latin1'))).DKIM_SIGS_SKIPPED, undefined);
});

test('DKIM: max_sigs is configurable; signatures of a third body canonicalization are skipped', async () => {
  const { engine: wide, net } = await authEngine(dns.address, { taskTimeout: 2, modules: { dkim: { max_sigs: 10 } } });
  try {
    const base = message('user@example.org');
    let msg = base;
    // relaxed/sha256 (s=sel), simple/sha256 (s=ed), relaxed/sha1 (s=sel): three body hashes.
    const { dkimSign } = await import('mailauth/lib/dkim/sign.js');
    for (const [canon, algorithm, selector, key] of [['relaxed/relaxed', 'rsa-sha256', 'sel', rsa], ['simple/simple', 'ed25519-sha256', 'ed', ed], ['relaxed/relaxed', 'rsa-sha1', 'sel', rsa]] as const) {
      const data = { signingDomain: 'example.org', selector, privateKey: key.privatePem, canonicalization: canon, algorithm };
      const out = await dkimSign(msg, { ...data, signatureData: [data] });
      msg = Buffer.concat([Buffer.from(out.signatures), msg]);
    }
    const r = await wide.scan(msg, meta({ ip: '192.0.2.10', from: 'user@example.org' }));
    // Header order puts the sha1 signature first (added last): it and the simple/simple one are
    // checked; the relaxed/sha256 one at the bottom would be a third body hash.
    assert.deepEqual(symbolMap(r).R_DKIM_ALLOW?.sort(), ['example.org:s=ed', 'example.org:s=sel']);
    assert.deepEqual(symbolMap(r).DKIM_SIGS_SKIPPED, ['1 signatures not checked (max_sigs 10; 1 of a body canonicalization past the first 2)']);
    const junk = await wide.scan(Buffer.from(`${junkSignatures(12)}${base.toString('latin1')}`, 'latin1'), meta({ ip: '192.0.2.10' }));
    assert.deepEqual(symbolMap(junk).DKIM_SIGS_SKIPPED, ['2 signatures not checked (max_sigs 10)']);
  } finally {
    await net.close();
  }
});

test('ARC: more than 50 sets is ARC_INVALID without a check (RFC 8617 §5.2), and DKIM still verifies', async () => {
  const signed = (await sign(message('user@example.org'), 'example.org', 'sel', rsa)).toString('latin1');
  let sets = '';
  for (let i = 5000; i >= 1; i--) {
    sets += `ARC-Seal: i=${i}; a=rsa-sha256; cv=pass; d=forwarder.example.net; s=arc; b=dGVzdA==\r\n`;
    sets += `ARC-Message-Signature: i=${i}; a=rsa-sha256; c=relaxed/relaxed; d=forwarder.example.net; s=arc; h=from:to; bh=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=; b=dGVzdA==\r\n`;
    sets += `ARC-Authentication-Results: i=${i}; forwarder.example.net; spf=pass\r\n`;
  }
  const cpu = process.cpuUsage();
  const r = await scan(Buffer.from(`${sets}${signed}`, 'latin1'));
  const used = process.cpuUsage(cpu);
  assert.deepEqual(names(r, /^ARC_/), ['ARC_INVALID']);
  // Our parse reads the first MAX_HEADERS fields: 683 sets of them.
  assert.deepEqual(symbolMap(r).ARC_INVALID, ['683 ARC sets, more than the 50 RFC 8617 allows; not checked']);
  assert.ok(used.user + used.system < 2_000_000, `${used.user + used.system} µs of CPU`);
  // 50 sets are checked (and found broken: their i=1 seal says cv=pass).
  const fifty = await scan(Buffer.from(`${sets.split('\r\n').slice(-151).join('\r\n')}${signed}`, 'latin1'));
  assert.doesNotMatch(symbolMap(fifty).ARC_INVALID?.[0] ?? 'checked', /more than the 50/);
});
