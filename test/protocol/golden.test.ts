// Golden replays: every HTTP case recorded from Rspamd 3.4 (shared/fixtures/scan) is sent
// byte for byte to our worker over a real socket. We assert status, reply framing headers
// and the JSON shape the protocol decides (keys, types, layout, GTUBE's action) — never the
// scores of rules we do not have. Where the issue deliberately differs from 3.4 the
// expectation says why; cases we cannot replay are skipped with a reason.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decode as msgpackDecode } from '@msgpack/msgpack';
import { zstdDecompressBounded } from '../../src/http/zstd.js';
import { exchange, FIXTURES, GTUBE, header, parseReply, startRealWorker } from './harness.js';

interface CaseJson {
  case: string;
  config: string;
  status_line: string;
  request_line?: string;
  response_headers?: Array<[string, string]>;
  json_keys?: string[];
}

const SKIP: Record<string, string> = {
  'a55-file-header': "the recorded File path (Rspamd's test machine's /tmp/scan-rspamd/msgs/gtube.eml) does not exist here; File input is tested in message-source.test.ts",
  'a27-checkv3-on-34': 'replayed in v3.test.ts: the recorded request targets 3.4, which has no /checkv3',
};

/** Keys whose presence the protocol layer decides (flags, layout), not the rule set. */
const PROTOCOL_KEYS = new Set(['is_skipped', 'score', 'required_score', 'action', 'symbols', 'groups', 'messages', 'profile', 'time_real', 'default', 'subject', 'reject']);

/** Cases where the issue asks for a behaviour different from 3.4 (reason in the comment). */
function expectedStatus(c: CaseJson): number {
  const rspamd = Number(c.status_line.split(' ')[1] ?? 0);
  switch (c.case) {
    case 'a83-bad-method': return 400; // 3.4 closes silently; we send a proper error
    case 'a85-too-large': return 413; // same
    case 'a29-half-close-checkv2': return 200; // we tolerate half-close (spec §1.1 MAY)
    case 'a57-message-length-control': return 200; // crashed 3.4; we ignore the header and scan
    case 'a56-file-header-missing': return 503; // a File that cannot be read keeps Rspamd's status and text
  }
  if (rspamd === 500 && /invalid command/.test(c.status_line)) return 404; // issue: unknown path → 404
  if (rspamd === 503) return 400; // issue: corrupt zstd / bad dictionary → 400
  return rspamd;
}

function isHttpCase(dir: string): boolean {
  const req = readFileSync(join(FIXTURES, dir, 'request.bin'));
  const line = req.subarray(0, req.indexOf('\n')).toString('latin1');
  return /^[A-Z]+ \S+ HTTP\/1\.[01]\r?$/.test(line);
}

const cases: CaseJson[] = readdirSync(FIXTURES)
  .filter((d) => existsSync(join(FIXTURES, d, 'case.json')) && existsSync(join(FIXTURES, d, 'request.bin')))
  .map((d) => JSON.parse(readFileSync(join(FIXTURES, d, 'case.json'), 'utf8')) as CaseJson)
  // Phase C adds custom actions to Rspamd's config: its differences are configuration, not protocol.
  .filter((c) => ['A', 'B', 'B+tap'].includes(c.config) && isHttpCase(c.case));

function decodeBody(reply: ReturnType<typeof parseReply>): { json: Record<string, unknown>; block?: Buffer } {
  let body = reply.body;
  if (header(reply, 'Compression') === 'zstd') body = zstdDecompressBounded(body, 64 << 20);
  const off = header(reply, 'Message-Offset');
  const payload = off !== undefined ? body.subarray(0, Number(off)) : body;
  const json = (header(reply, 'Content-Type') === 'application/msgpack' ? msgpackDecode(payload) : JSON.parse(payload.toString('utf8'))) as Record<string, unknown>;
  return off !== undefined ? { json, block: body.subarray(Number(off)) } : { json };
}

describe('golden replays of Rspamd 3.4 captures', () => {
  let port = 0;
  let close: () => Promise<void>;
  before(async () => {
    const w = await startRealWorker();
    port = w.port;
    close = w.close;
  });
  after(() => close());

  it('covers a meaningful set of recorded HTTP cases', () => {
    assert.ok(cases.length >= 80, `only ${cases.length} cases found`);
  });

  for (const c of cases) {
    it(c.case, { skip: SKIP[c.case] ?? false }, async () => {
      const request = readFileSync(join(FIXTURES, c.case, 'request.bin'));
      const { data } = await exchange(port, request);
      const reply = parseReply(data);
      const status = expectedStatus(c);
      assert.equal(reply.status, status, `status (reason: ${reply.reason})`);
      assert.match(header(reply, 'Server') ?? '', /^mailsift\/\d+\.\d+/, 'Server: mailsift/<version>, rspamd/3.4-shaped');
      assert.ok(header(reply, 'Date'));
      if (status !== 200) {
        assert.equal(header(reply, 'Content-Type'), 'application/json');
        assert.equal(header(reply, 'Compression'), undefined, 'error replies are never compressed');
        const err = JSON.parse(reply.body.toString()) as { error: string; error_domain: string };
        assert.equal(typeof err.error, 'string');
        assert.equal(reply.reason, err.error, 'reason phrase carries the error text');
        const rspamdReason = c.status_line.split(' ').slice(2).join(' ');
        if (rspamdReason && !rspamdReason.startsWith('invalid command')) assert.equal(err.error, rspamdReason);
        return;
      }
      const rspamdHeaders = c.response_headers ?? [['Content-Type', 'application/json']];
      const rspamdCt = rspamdHeaders.find(([k]) => k === 'Content-Type')?.[1];
      const ct = header(reply, 'Content-Type');
      if (rspamdCt === 'text/plain') {
        assert.equal(ct, 'text/plain');
        assert.equal(reply.body.toString(), 'pong\r\n');
        return;
      }
      // 3.4 ignored Accept: application/msgpack; the issue asks for msgpack (3.9+ behaviour).
      assert.equal(ct, c.case === 'a26-accept-msgpack' ? 'application/msgpack' : rspamdCt);
      // 3.4 ignored Accept-Encoding / Content-Encoding: zstd; 3.11+/3.13+ compress the reply.
      const compressed = rspamdHeaders.some(([k]) => k === 'Compression') || c.case === 'a72-accept-encoding-zstd' || c.case === 'a73-content-encoding-zstd';
      assert.equal(header(reply, 'Compression'), compressed ? 'zstd' : undefined);
      assert.equal(header(reply, 'Content-Encoding'), compressed ? 'zstd' : undefined);
      const { json } = decodeBody(reply);
      const theirs = new Set(c.json_keys ?? []);
      if (c.json_keys) {
        for (const k of theirs) if (PROTOCOL_KEYS.has(k)) assert.ok(k in json, `key ${k} missing`);
        for (const k of Object.keys(json)) if (PROTOCOL_KEYS.has(k)) assert.ok(theirs.has(k), `unexpected key ${k}`);
      }
      const legacy = 'default' in json;
      const top = (legacy ? json.default : json) as Record<string, unknown>;
      assert.equal(typeof top.score, 'number');
      assert.equal(typeof top.required_score, 'number');
      assert.equal(typeof top.action, 'string');
      assert.equal(typeof top.is_skipped, 'boolean');
      assert.equal(typeof json.time_real, 'number');
      if (legacy) {
        assert.equal(typeof top.is_spam, 'boolean');
        for (const [k, v] of Object.entries(top)) {
          if (typeof v === 'object' && v !== null) assert.ok(!('metric_score' in v), `${k}: v1 symbols have no metric_score`);
        }
      } else {
        const syms = json.symbols as Record<string, { name: string; score: number; metric_score?: number }>;
        for (const [k, s] of Object.entries(syms)) {
          assert.equal(s.name, k);
          assert.equal(typeof s.score, 'number');
          if (c.case !== 'a23-legacy-skip') assert.equal(typeof s.metric_score, 'number', `${k} metric_score`);
          else assert.equal(s.metric_score, undefined);
        }
      }
      const body = request.subarray(request.indexOf('\r\n\r\n'));
      const plainGtube = body.includes(GTUBE) && !/\r\n(settings|settings-id|compression|content-encoding):/i.test(request.subarray(0, request.indexOf('\r\n\r\n')).toString('latin1'));
      if (plainGtube) {
        assert.equal(top.action, 'reject', 'GTUBE is rejected');
        assert.equal((json.messages as Record<string, string>).smtp_message, 'Gtube pattern');
      }
    });
  }

  it('Haraka requests (chunked, keep-alive, body_block in h02) get a body JSON.parse reads whole', async () => {
    for (const c of ['h01-haraka-default', 'h02-haraka-flags']) {
      const { data } = await exchange(port, readFileSync(join(FIXTURES, c, 'request.bin')));
      const r = parseReply(data);
      const json = JSON.parse(r.body.toString()) as { action: string; score: number; symbols: Record<string, { name: string; score: number }> };
      assert.equal(typeof json.action, 'string', c);
      assert.equal(typeof json.score, 'number');
      for (const s of Object.values(json.symbols)) assert.equal(typeof s.name, 'string');
    }
  });

  /** Whether the default `legacy_compat: spamd` calls this action spam (render-text.ts). */
  const spamAction = (action: string): boolean => !['no action', 'greylist', 'soft reject'].includes(action);

  for (const dir of readdirSync(FIXTURES).filter((d) => existsSync(join(FIXTURES, d, 'request.bin')) && existsSync(join(FIXTURES, d, 'case.json')) && !isHttpCase(d))) {
    it(`text dialect: ${dir}`, async () => {
      const request = readFileSync(join(FIXTURES, dir, 'request.bin'));
      const recorded = readFileSync(join(FIXTURES, dir, 'response.bin'));
      const { data, closedByServer } = await exchange(port, request);
      assert.ok(closedByServer, 'the server closes after a text reply (Exim reads until EOF)');
      const text = data.toString('latin1');
      const verb = request.subarray(0, request.indexOf(' ')).toString('latin1');
      if (recorded.length === 0) {
        // 3.4 closed silently on the spamc verbs it does not know; we answer them as spamd does
        // (legacy_compat: rspamd restores the silence, see test/protocol/legacy-spamc.test.ts).
        if (verb === 'PING') return assert.equal(text, 'SPAMD/1.5 0 PONG\r\n');
        const m = /^SPAMD\/1\.1 0 EX_OK\r\nContent-length: (\d+)\r\nSpam: (True|False) ; -?\d+\.\d\d \/ -?\d+\.\d\d\r\n\r\n/.exec(text);
        assert.ok(m, JSON.stringify(text.slice(0, 200)));
        const tail = data.subarray(Buffer.byteLength(m[0]));
        assert.equal(tail.length, Number(m[1]), 'spamc checks Content-length against what follows');
        if (verb === 'PROCESS') assert.match(tail.toString('utf8'), /\r\nX-Spam-Status: (Yes|No), score=/);
        else assert.match(tail.toString('utf8'), /^Content analysis details: /);
        return;
      }
      const gtube = request.includes(GTUBE);
      if (recorded.toString('latin1').startsWith('RSPAMD/')) {
        // Exim: sscanf("RSPAMD/%7s 0 EX_OK\r\nMetric: default; %7s %lf / %lf / %lf\r\n") then "Action: ".
        const lines = text.split('\r\n');
        assert.equal(lines[0], 'RSPAMD/1.3 0 EX_OK');
        const metric = /^Metric: default; (True|False); -?\d+\.\d\d \/ -?\d+\.\d\d \/ 0\.0$/.exec(lines[1]!);
        assert.ok(metric, lines[1]);
        assert.match(lines[2]!, /^Action: .+$/);
        // Deliberately not 3.4's constant False: the flag follows the action.
        assert.equal(metric[1], spamAction(lines[2]!.slice('Action: '.length)) ? 'True' : 'False');
        if (gtube) assert.equal(lines[2], 'Action: reject');
        assert.equal(lines.at(-1), '');
        for (const l of lines.slice(3, -1)) assert.match(l, /^(Subject|Symbol|Message|Message-ID): /);
        assert.match(lines.at(-2)!, /^Message-ID: /);
        if (recorded.includes('Subject: ')) assert.ok(text.includes('\r\nSubject: '), 'rewrite subject line');
      } else {
        const m = /^SPAMD\/1\.1 0 EX_OK\r\nContent-length: (\d+)\r\nSpam: (True|False) ; (-?\d+\.\d\d) \/ (-?\d+\.\d\d)\r\n\r\n/.exec(text);
        assert.ok(m, JSON.stringify(text.slice(0, 120)));
        const tail = data.subarray(Buffer.byteLength(m[0]));
        assert.equal(tail.length, Number(m[1]));
        if (gtube) assert.ok(tail.toString().split(/[,\r\n]/).includes('GTUBE'));
        // The flag follows the action, which the RSPAMC reply to the same request names.
        const asRspamc = Buffer.concat([Buffer.from(`${verb} RSPAMC/1.3`), request.subarray(request.indexOf('\r\n'))]);
        const action = /\r\nAction: ([^\r]*)\r\n/.exec((await exchange(port, asRspamc)).data.toString('latin1'))?.[1];
        assert.ok(action !== undefined);
        assert.equal(m[2], spamAction(action) ? 'True' : 'False', `action ${action}`);
        if (gtube) assert.equal(m[2], 'True', 'spamc -c must exit 1 on GTUBE');
      }
    });
  }

  it('the worker still answers /ping after all replays', async () => {
    const { data } = await exchange(port, Buffer.from('GET /ping HTTP/1.1\r\nConnection: close\r\n\r\n'));
    assert.equal(parseReply(data).body.toString(), 'pong\r\n');
  });
});
