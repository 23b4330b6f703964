// The one code table: every coded error the transport and protocol layers throw must be in
// it (a typo would silently become a 500), and anything uncoded becomes a logged 500.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { classifyError, ERROR_TABLE, MailsiftError } from '../../src/http/errors.js';
import { replyForError } from '../../src/http/reply.js';

const ROOT = new URL('../../src/', import.meta.url).pathname;

function thrownCodes(): Set<string> {
  const codes = new Set<string>();
  // rule-libs/bayes/ throws the LearnError codes the controller's learn endpoints render; proxy/ the relay's;
  // storage/ the StoreError codes the controller renders as 503/500.
  for (const dir of ['http', 'protocol', 'workers', 'rule-libs/bayes', 'proxy', 'storage']) {
    // Subfolders too (http/crypt/, workers/controller/).
    for (const f of readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' }).filter((n) => n.endsWith('.ts'))) {
      const src = readFileSync(join(ROOT, dir, f), 'utf8');
      for (const m of src.matchAll(/(?:MailsiftError|v3Error|LearnError|relayError|StoreError|coded)\(\s*'([A-Z0-9_]+)'/g)) codes.add(m[1]!);
      // Our own codes only: comparisons with Node's system codes (ENOENT…) are not table entries.
      for (const m of src.matchAll(/code === '((?:ERR|LEARN)_[A-Z0-9_]+)'/g)) codes.add(m[1]!);
    }
  }
  return codes;
}

describe('error table', () => {
  it('lists every code thrown in http/, protocol/ and workers/', () => {
    const codes = thrownCodes();
    assert.ok(codes.size >= 15, `found only ${codes.size} codes`);
    for (const c of codes) assert.ok(ERROR_TABLE[c], `${c} is thrown but not in ERROR_TABLE`);
  });

  it('has no code that nothing throws', () => {
    const codes = thrownCodes();
    for (const c of Object.keys(ERROR_TABLE)) assert.ok(codes.has(c), `${c} is in the table but never thrown`);
  });

  it('matches on code, not class identity (a plugin may carry its own copy)', () => {
    const foreign = Object.assign(new Error('Request entity too large'), { code: 'ERR_BODY_TOO_LARGE' });
    assert.equal(classifyError(foreign).status, 413);
    assert.equal(classifyError(new MailsiftError('ERR_V3_NO_MESSAGE', 'x')).domain, 'protocol-error');
  });

  it('unknown errors → 500, logged, connection closed, no internals leaked', () => {
    const seen: unknown[] = [];
    const r = replyForError(new TypeError('secret detail'), (e) => seen.push(e));
    assert.equal(r.status, 500);
    assert.equal(seen.length, 1);
    assert.equal(r.close, true);
    assert.ok(!String(r.body).includes('secret'));
  });
});
