// Free-mail and disposable addresses: the shipped multimap rules (conf/modules.d/multimap.yaml)
// over the shipped map files (conf/maps.d), the rule that reads them (FREEMAIL_REPLYTO_NEQ_FROM_DOM)
// and the composites they make able to fire (FREEMAIL_AFF), through a real engine built from
// the shipped configuration.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { createEngine } from '../../src/engine/index.js';
import { createMapRegistry } from '../../src/maps/index.js';
import { builtinModules } from '../../src/modules/index.js';
import { quietLog } from '../storage/helpers.js';
import { meta, names, symbol } from './helpers.js';

async function shippedEngine(confDir = 'conf') {
  const cfg = await loadConfig(confDir);
  const maps = createMapRegistry({ baseDir: cfg.dir, log: quietLog, fileCheckMs: 60_000 });
  return { engine: await createEngine(cfg.engine, builtinModules, { log: quietLog, maps }), maps };
}

function mail(headers: string, body = 'Hi,\r\n\r\nsee you on Friday at the station.\r\n\r\nAnna\r\n'): Buffer {
  return Buffer.from(`${headers}Subject: Friday\r\nDate: Mon, 3 Jun 2024 10:00:00 +0000\r\nMessage-ID: <m1@mail.example>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${body}`);
}

const AFF_BODY = `Dear Friend,\r\n\r\nMy name is Barrister James Okafor, personal attorney to the late engineer who left the sum of\r\nUS$10.5 million in a bank here. I seek your consent to present you as the next of kin so the\r\nfunds can be transferred to your account. Reply to my private email.\r\n`;

test('FREEMAIL_* and DISPOSABLE_* name the matched domain; a company domain matches nothing', async () => {
  const { engine, maps } = await shippedEngine();
  try {
    const r = await engine.scan(mail('From: Anna <anna.k@gmail.com>\r\nTo: bob@yahoo.co.uk\r\nCc: carl@example.org\r\nReply-To: anna.k@gmail.com\r\n'), meta({ from: 'anna.k@gmail.com', rcpt: ['bob@yahoo.co.uk'] }));
    assert.deepEqual(symbol(r, 'FREEMAIL_FROM')?.options, ['gmail.com']);
    assert.deepEqual(symbol(r, 'FREEMAIL_ENVFROM')?.options, ['gmail.com']);
    assert.deepEqual(symbol(r, 'FREEMAIL_TO')?.options, ['yahoo.co.uk']);
    assert.deepEqual(symbol(r, 'FREEMAIL_ENVRCPT')?.options, ['yahoo.co.uk']);
    assert.deepEqual(symbol(r, 'FREEMAIL_REPLYTO')?.options, ['gmail.com']);
    assert.ok(!names(r).has('FREEMAIL_CC') && !names(r).has('FREEMAIL_REPLYTO_NEQ_FROM_DOM') && !names(r).has('FREEMAIL_AFF'));
    const d = await engine.scan(mail('From: x@mailinator.com\r\nTo: y@example.org\r\nReply-To: z@guerrillamail.com\r\n'), meta({ from: 'x@mailinator.com' }));
    assert.deepEqual(symbol(d, 'DISPOSABLE_FROM')?.options, ['mailinator.com']);
    assert.deepEqual(symbol(d, 'DISPOSABLE_ENVFROM')?.options, ['mailinator.com']);
    assert.deepEqual(symbol(d, 'DISPOSABLE_REPLYTO')?.options, ['guerrillamail.com']);
    assert.ok(![...names(d)].some((n) => n.startsWith('FREEMAIL_')));
    const corp = await engine.scan(mail('From: a@example.com\r\nTo: b@example.org\r\n'), meta({ from: 'a@example.com', rcpt: ['b@example.org'] }));
    assert.ok(![...names(corp)].some((n) => n.startsWith('FREEMAIL_') || n.startsWith('DISPOSABLE_')));
    // A look-alike sub-domain is not the provider.
    const sub = await engine.scan(mail('From: a@gmail.com.example.net\r\nTo: b@example.org\r\n'), meta());
    assert.ok(!names(sub).has('FREEMAIL_FROM'));
  } finally {
    maps.close();
  }
});

test('FREEMAIL_REPLYTO_NEQ_FROM_DOM: answers go to another free-mail service', async () => {
  const { engine, maps } = await shippedEngine();
  try {
    const r = await engine.scan(mail('From: "Mr. James" <j.okafor@yahoo.com>\r\nTo: undisclosed-recipients:;\r\nReply-To: j.okafor1@outlook.com\r\n'), meta());
    assert.equal(symbol(r, 'FREEMAIL_REPLYTO_NEQ_FROM_DOM')?.score, 3);
    const same = await engine.scan(mail('From: j@yahoo.com\r\nTo: b@example.org\r\nReply-To: j2@yahoo.com\r\n'), meta());
    assert.ok(!names(same).has('FREEMAIL_REPLYTO_NEQ_FROM_DOM'));
  } finally {
    maps.close();
  }
});

test('FREEMAIL_AFF: a 419 letter from a free mailbox to undisclosed recipients; the same letter to a named recipient is not', async () => {
  const { engine, maps } = await shippedEngine();
  try {
    const r = await engine.scan(mail('From: James Okafor <j.okafor@yahoo.com>\r\nTo: undisclosed-recipients:;\r\n', AFF_BODY), meta());
    assert.ok(names(r).has('INTRODUCTION') && names(r).has('R_UNDISC_RCPT'));
    assert.equal(symbol(r, 'FREEMAIL_AFF')?.score, 4);
    const named = await engine.scan(mail('From: James Okafor <j.okafor@yahoo.com>\r\nTo: bob@example.org\r\n', AFF_BODY), meta());
    assert.ok(!names(named).has('FREEMAIL_AFF'));
    const corp = await engine.scan(mail('From: James Okafor <j.okafor@example.com>\r\nTo: undisclosed-recipients:;\r\n', AFF_BODY), meta());
    assert.ok(!names(corp).has('FREEMAIL_AFF'));
  } finally {
    maps.close();
  }
});

test('the lists are watched map files: a domain appended is matched after the reload', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mailsift-freemail-'));
  try {
    await cp('conf', dir, { recursive: true });
    const { engine, maps } = await shippedEngine(dir);
    try {
      const msg = mail('From: a@free.example\r\nTo: b@example.org\r\n');
      assert.ok(!names(await engine.scan(msg, meta())).has('FREEMAIL_FROM'));
      await appendFile(join(dir, 'maps.d', 'freemail.map'), '\nfree.example\n');
      await maps.checkFiles();
      assert.deepEqual(symbol(await engine.scan(msg, meta()), 'FREEMAIL_FROM')?.options, ['free.example']);
    } finally {
      maps.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('local.d/multimap.yaml adds rules over the shipped ones; override.d replaces them', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mailsift-freemail-'));
  try {
    await cp('conf', dir, { recursive: true });
    const { writeFile, mkdir } = await import('node:fs/promises');
    await writeFile(join(dir, 'local.d', 'multimap.yaml'), 'rules:\n  local_bad: { type: from, filter: "email:domain", map: [bad.example], symbol: LOCAL_BAD, score: 1 }\n');
    const merged = await loadConfig(dir);
    const rules = Object.keys((merged.engine.modules['multimap'] as { rules: Record<string, unknown> }).rules);
    assert.ok(rules.includes('local_bad') && rules.includes('freemail_from'));
    await mkdir(join(dir, 'override.d'), { recursive: true });
    await writeFile(join(dir, 'override.d', 'multimap.yaml'), 'rules:\n  only: { type: from, map: [x.example] }\n');
    const replaced = await loadConfig(dir);
    assert.deepEqual(Object.keys((replaced.engine.modules['multimap'] as { rules: Record<string, unknown> }).rules), ['only']);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
