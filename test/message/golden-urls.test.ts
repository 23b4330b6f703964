// URLs and e-mail addresses against Rspamd 3.4's own answers: every captured /checkv2 scan
// whose reply lists `urls`/`emails` is replayed through parseMessage and compared.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseMessage } from '../../src/message/parse-message.js';
import { scanFixturesDir } from './fixtures.js';

interface Capture {
  name: string;
  body: Buffer;
  urls: unknown[];
  emails: string[];
}

// Bodies wrapped by the transport (chunked, zstd) or not MIME at all (Raw, v3 multipart) are
// the transport's and protocol's tests; here only plain bodies are replayed.
const TRANSPORT_WRAPPED = /^(?:transfer-encoding:\s*chunked|compression:|content-encoding:|raw:\s*yes)|multipart\/form-data/im;

function captures(): Capture[] {
  const out: Capture[] = [];
  for (const name of readdirSync(scanFixturesDir).sort()) {
    const replyPath = join(scanFixturesDir, name, 'response-body.json');
    const requestPath = join(scanFixturesDir, name, 'request.bin');
    if (!existsSync(replyPath) || !existsSync(requestPath)) continue;
    let reply: { urls?: unknown[]; emails?: string[] };
    try {
      reply = JSON.parse(readFileSync(replyPath, 'utf8'));
    } catch {
      continue; // legacy text replies
    }
    if (!reply || typeof reply !== 'object' || (!reply.urls && !reply.emails)) continue;
    const request = readFileSync(requestPath);
    const split = request.indexOf('\r\n\r\n');
    const head = request.toString('latin1', 0, split);
    if (!head.startsWith('POST /checkv2') || TRANSPORT_WRAPPED.test(head)) continue;
    out.push({ name, body: request.subarray(split + 4), urls: reply.urls ?? [], emails: reply.emails ?? [] });
  }
  return out;
}

const all = captures();

test('there are captures to compare against', () => {
  assert.ok(all.length >= 20, `found ${all.length}`);
});

test('URL hosts and body e-mail addresses match Rspamd', () => {
  for (const c of all) {
    const m = parseMessage(c.body);
    const theirHosts = c.urls.map((u) => (typeof u === 'string' ? u : (u as { host: string }).host)).sort();
    const ourHosts = [...new Set(m.urls.filter((u) => !u.isEmail).map((u) => u.host))].sort();
    assert.deepEqual(ourHosts, theirHosts, `${c.name}: url hosts`);
    assert.deepEqual(m.emails.map((e) => e.address).sort(), [...c.emails].sort(), `${c.name}: emails`);
  }
});

test('extended URL format: url, host, tld and flags match Rspamd', () => {
  const extended = all.filter((c) => c.urls.length > 0 && typeof c.urls[0] === 'object');
  assert.ok(extended.length >= 2);
  for (const c of extended) {
    const m = parseMessage(c.body);
    const ours = m.urls.filter((u) => !u.isEmail).map((u) => ({ url: u.url, tld: u.tld, host: u.host, flags: [...u.flags].sort() }));
    const theirs = (c.urls as Array<{ url: string; tld: string; host: string; flags: string[] }>).map((u) => ({ ...u, flags: [...u.flags].sort() }));
    assert.deepEqual(ours, theirs, c.name);
  }
});
