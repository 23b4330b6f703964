// Controller password hashes: Rspamd's $1$ (PBKDF2-BLAKE2b) and $2$ (Catena) checked against
// the fixtures and against hashes the real `rspamadm pw` makes now; our $1$/$2$ output checked
// by `rspamadm pw --check`; mailsift's $scrypt$; plain text; malformed hashes never match.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { hashPassword, isHashedPassword, storedPasswordKind, verifyPassword } from '../../src/crypto/password.js';
import { CLIENT_ENV, run } from '../interop/run.js';

const RSPAMADM = '/usr/bin/rspamadm';
const noRspamadm = existsSync(RSPAMADM) ? false : 'rspamadm not installed (Debian rspamd package)';

/** `plain → hash` pairs written down in the shared fixtures and spec, read from there. */
function documentedHashes(): Array<{ plain: string; hash: string; where: string }> {
  const out: Array<{ plain: string; hash: string; where: string }> = [];
  const readme = readFileSync('/work/shared/fixtures/controller/README.md', 'utf8');
  for (const m of readme.matchAll(/\|\s*`([^`]+)`\s*\|\s*`(\$[12]\$[a-z0-9]+\$[a-z0-9]+)`\s*\|/g)) out.push({ plain: m[1]!, hash: m[2]!, where: 'fixtures/controller/README.md' });
  const spec = readFileSync('/work/shared/spec/controller.md', 'utf8');
  for (const m of spec.matchAll(/`([^`$]+)` → `(\$[12]\$[a-z0-9]+\$[a-z0-9]+)`/g)) out.push({ plain: m[1]!, hash: m[2]!, where: 'spec/controller.md' });
  return out;
}

test('documented Rspamd hashes ($1$ and $2$) verify; a wrong password does not', () => {
  const cases = documentedHashes();
  assert.ok(cases.some((c) => c.hash.startsWith('$1$')) && cases.some((c) => c.hash.startsWith('$2$')), JSON.stringify(cases));
  for (const { plain, hash, where } of cases) assert.equal(verifyPassword(hash, plain), true, `${where}: ${plain}`);
  // Each check costs a full derivation: one wrong password per algorithm is enough.
  for (const kind of ['$1$', '$2$']) {
    const c = cases.find((x) => x.hash.startsWith(kind))!;
    assert.equal(verifyPassword(c.hash, `${c.plain}x`), false, c.hash);
  }
});

test('hashes made now by rspamadm pw (catena and pbkdf2, short, UTF-8 and long passwords) verify', { skip: noRspamadm }, async () => {
  // Long passwords exercise Rspamd's quirks: Catena sees only (length mod 256) bytes, PBKDF2
  // pre-hashes keys over 64 bytes.
  const passwords = ['pässwörd ✓', 'long-'.repeat(60)];
  const jobs = passwords.flatMap((pw) => (['catena', 'pbkdf2'] as const).map(async (type) => {
    const r = await run(RSPAMADM, ['pw', '-t', type, '-p', pw]);
    assert.equal(r.code, 0, r.stderr);
    return { pw, type, hash: r.stdout.trim() };
  }));
  for (const { pw, type, hash } of await Promise.all(jobs)) {
    assert.equal(storedPasswordKind(hash), type, hash);
    assert.equal(verifyPassword(hash, pw), true, `${type} ${pw.slice(0, 12)}…`);
    // A change inside the part each algorithm really reads must be refused.
    if (pw.length > 255) assert.equal(verifyPassword(hash, `X${pw.slice(1)}`), false, `${type}: first byte of a long password`);
  }
});

/** `rspamadm pw --check` reads the password from a terminal only: run it under script(1). */
function rspamadmCheck(hash: string, password: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', `${RSPAMADM} pw --check -p '${hash}'`, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'], env: CLIENT_ENV });
    let out = '';
    let sent = false;
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      if (!sent && /passphrase/i.test(out)) {
        sent = true;
        child.stdin.write(`${password}\n`);
      }
    });
    child.on('error', reject);
    child.on('close', () => resolve(out));
    setTimeout(() => child.kill('SIGKILL'), 20_000).unref();
  });
}

test('our $2$ and $1$ hashes are accepted by rspamadm pw --check', { skip: noRspamadm || (existsSync('/usr/bin/script') ? false : 'script(1) missing') }, async () => {
  const catena = hashPassword('interop-pw', 'catena');
  const pbkdf2 = hashPassword('interop-pw', 'pbkdf2');
  assert.match(catena, /^\$2\$[a-z0-9]{32}\$[a-z0-9]{52}$/);
  assert.match(pbkdf2, /^\$1\$[a-z0-9]{32}\$[a-z0-9]{52}$/);
  const [ok2, ok1, bad2] = await Promise.all([rspamadmCheck(catena, 'interop-pw'), rspamadmCheck(pbkdf2, 'interop-pw'), rspamadmCheck(catena, 'interop-px')]);
  assert.match(ok2, /password correct/);
  assert.match(ok1, /password correct/);
  assert.match(bad2, /password incorrect/);
});

test('scrypt: own format, salted, round trip', () => {
  const a = hashPassword('correct horse');
  const b = hashPassword('correct horse');
  assert.match(a, /^\$scrypt\$ln=15,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
  assert.notEqual(a, b, 'a fresh salt every time');
  assert.equal(verifyPassword(a, 'correct horse'), true);
  assert.equal(verifyPassword(b, 'correct horse'), true);
  assert.equal(verifyPassword(a, 'correct horse '), false);
  assert.equal(verifyPassword(a, ''), false);
});

test('a verified password is remembered per hash; a wrong one is still refused afterwards', () => {
  const h = hashPassword('cached', 'catena');
  let t = performance.now();
  assert.equal(verifyPassword(h, 'cached'), true);
  const first = performance.now() - t;
  t = performance.now();
  for (let i = 0; i < 20; i++) assert.equal(verifyPassword(h, 'cached'), true);
  const twenty = performance.now() - t;
  assert.ok(twenty < first, `20 cached checks (${twenty.toFixed(1)} ms) should cost less than one derivation (${first.toFixed(1)} ms)`);
  assert.equal(verifyPassword(h, 'cachee'), false);
});

test('plain text passwords compare exactly; hashed-looking strings follow the hash rules', () => {
  assert.equal(isHashedPassword('q1'), false);
  assert.equal(verifyPassword('secret', 'secret'), true);
  assert.equal(verifyPassword('secret', 'Secret'), false);
  assert.equal(verifyPassword('secret', 'secret '), false);
  assert.equal(verifyPassword('secret', ''), false);
  // `$3$…` is not a known id: plain text, as in Rspamd.
  assert.equal(storedPasswordKind('$3$abc$def'), 'plain');
  assert.equal(verifyPassword('$3$abc$def', '$3$abc$def'), true);
});

test('malformed or tampered hashes never match, not even their own text', () => {
  const good = hashPassword('pw', 'pbkdf2');
  const [, id, salt, key] = good.split('$');
  const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'y' ? 'b' : 'y') + s.slice(i + 1);
  const bad = [
    `$${id}$${salt}$${flip(key!, 10)}`, // other key
    `$${id}$${flip(salt!, 3)}$${key}`, // other salt
    `$${id}$${salt!.slice(1)}$${key}`, // salt too short
    `$${id}$${salt}$${key}y`, // key too long
    `$${id}$${salt}`, // no key
    `$2$${salt}$${key!.toUpperCase()}`, // not base32 (upper case)
    '$scrypt$ln=15,r=8,p=1$AAAA$BBBB',
    '$scrypt$ln=40,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', // cost above the cap
    '$scrypt$ln=15,r=8$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
  ];
  for (const h of bad) {
    assert.equal(isHashedPassword(h), true, h);
    assert.equal(verifyPassword(h, 'pw'), false, h);
  }
  // Its own text as the password: still a derivation and a mismatch, never a plain compare.
  assert.equal(verifyPassword(bad[4]!, bad[4]!), false);
});
