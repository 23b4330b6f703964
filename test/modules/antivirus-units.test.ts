// The antivirus module's pure parts: the three protocols' bytes and replies, and its
// configuration as an operator writes it (local.d/antivirus.yaml through the real loader).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isConfigError, type ConfigIssue } from '../../src/config/errors.js';
import { CLAMD_CHUNK, clamdInstream, MAX_NAME_CHARS, MAX_NAMES_PER_REPLY, parseClamdReply, parseHttpReply, parseLineReply } from '../../src/modules/antivirus/wire.js';
import { parseServer } from '../../src/modules/antivirus/rule.js';
import { AntivirusConfig } from '../../src/modules/antivirus/config.js';
import { loadModuleYaml } from './helpers.js';

test('zINSTREAM: command, length-prefixed chunks, zero terminator', () => {
  const content = Buffer.alloc(CLAMD_CHUNK + 10, 0x61);
  const parts = clamdInstream(content);
  const all = Buffer.concat(parts);
  assert.equal(all.subarray(0, 10).toString('latin1'), 'zINSTREAM\0');
  assert.equal(all.readUInt32BE(10), CLAMD_CHUNK);
  assert.equal(all.readUInt32BE(14 + CLAMD_CHUNK), 10);
  assert.equal(all.readUInt32BE(all.length - 4), 0);
  assert.equal(all.length, 10 + 4 + CLAMD_CHUNK + 4 + 10 + 4);
  // Empty content is the command and the terminator only.
  assert.equal(Buffer.concat(clamdInstream(Buffer.alloc(0))).length, 14);
});

test('clamd replies', () => {
  assert.deepEqual(parseClamdReply('stream: OK\0'), { kind: 'clean' });
  assert.deepEqual(parseClamdReply('stream: Win.Test.EICAR_HDB-1 FOUND'), { kind: 'found', names: ['Win.Test.EICAR_HDB-1'] });
  assert.deepEqual(parseClamdReply('INSTREAM size limit exceeded. ERROR'), { kind: 'error', text: 'INSTREAM size limit exceeded. ERROR' });
  assert.equal(parseClamdReply('hello').kind, 'error');
  const long = parseClamdReply(`stream: ${'x'.repeat(5000)} FOUND`);
  assert.ok(long.kind === 'found' && long.names[0]!.length === MAX_NAME_CHARS);
});

test('line protocol replies', () => {
  assert.deepEqual(parseLineReply('OK\r'), { kind: 'clean' });
  assert.deepEqual(parseLineReply('FOUND A.B C.D'), { kind: 'found', names: ['A.B', 'C.D'] });
  const many = parseLineReply(`FOUND ${Array.from({ length: 100 }, (_, i) => `V${i}`).join(' ')}`);
  assert.ok(many.kind === 'found' && many.names.length === MAX_NAMES_PER_REPLY);
  assert.deepEqual(parseLineReply('ERROR busy'), { kind: 'error', text: 'ERROR busy' });
  assert.equal(parseLineReply('FOUND').kind, 'error', 'FOUND without a name is not a detection we can report');
});

test('HTTP hook replies: only a 200 with a `viruses` list is a verdict', () => {
  assert.deepEqual(parseHttpReply(200, '{"viruses":[]}'), { kind: 'clean' });
  assert.deepEqual(parseHttpReply(200, '{"viruses":["X.Y"],"engine":"z"}'), { kind: 'found', names: ['X.Y'] });
  assert.equal(parseHttpReply(200, '{}').kind, 'error');
  assert.equal(parseHttpReply(200, '{"viruses":[1]}').kind, 'error');
  assert.equal(parseHttpReply(200, 'not json').kind, 'error');
  assert.equal(parseHttpReply(200, '["X"]').kind, 'error');
  assert.deepEqual(parseHttpReply(500, '{"viruses":["X"]}'), { kind: 'error', text: 'HTTP status 500' });
});

test('servers: default ports by type, IPv6 in brackets', () => {
  assert.deepEqual(parseServer('127.0.0.1', 3310), { host: '127.0.0.1', port: 3310 });
  assert.deepEqual(parseServer('av.example.com:1234', 3310), { host: 'av.example.com', port: 1234 });
  assert.deepEqual(parseServer('[::1]:3310', undefined), { host: '::1', port: 3310 });
  assert.deepEqual(parseServer('::1', 80), { host: '::1', port: 80 });
  assert.throws(() => parseServer('10.0.0.1', undefined), /needs a port/);
});

const loadWith = (yaml: string) => loadModuleYaml('antivirus', yaml);

test('local.d/antivirus.yaml: Rspamd-style options load; mistakes are config errors naming the key', async () => {
  const cfg = await loadWith('rules:\n  clamav:\n    servers: "127.0.0.1:3310"\n    action: reject\n    max_size: 20M\n    timeout: 2s\n    patterns: { JUST_EICAR: "^Eicar-Test-Signature$" }\n');
  // The loader checked the file; the module reads its section with the same schema.
  const rules = AntivirusConfig.parse(cfg.engine.modules['antivirus']).rules;
  assert.equal(rules['clamav']!.max_size, 20 * 1024 * 1024);
  assert.equal(rules['clamav']!.timeout, 2);
  assert.deepEqual(rules['clamav']!.servers, ['127.0.0.1:3310']);
  for (const [yaml, path] of [
    ['rules:\n  clamav:\n    servers: "127.0.0.1:3310"\n    max_sise: 10\n', /max_sise/],
    ['rules:\n  clamav:\n    servers: "127.0.0.1:99999"\n', /servers/],
    ['rules:\n  clamav:\n    servers: "127.0.0.1"\n    type: sophos\n', /type/],
  ] as const) {
    let issues: readonly ConfigIssue[] = [];
    try {
      await loadWith(yaml);
    } catch (err) {
      assert.ok(isConfigError(err));
      issues = (err as { issues: readonly ConfigIssue[] }).issues;
    }
    assert.ok(issues.some((i) => path.test(i.path)), `${yaml}: ${JSON.stringify(issues)}`);
  }
});
