// The two endpoints the web UI's scan and neural pages use: POST /checkexplain answers a scan's
// history row (the verdict with its explanation) and keeps the scan in the history like
// /checkv2; GET /plugins/neural/status reports each neural rule (or that none is configured).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { READ_PASS, rawRequest, startRig, type Rig } from './edit-harness.js';

const GTUBE = 'From: spammer@spammer.example\r\nTo: user@example.net\r\nSubject: Test spam mail (GTUBE)\r\nMessage-ID: <gtube-explain@spammer.example>\r\n\r\nXJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X\r\n';
const PLAIN = 'From: a@example.org\r\nTo: user@example.net\r\nSubject: local map\r\nMessage-ID: <local-explain@example.org>\r\n\r\nHello.\r\n';

interface Row {
  action: string;
  score: number;
  'message-id'?: string;
  sender_smtp: string;
  ip: string;
  symbols: Record<string, { score: number; group?: string; options?: string[] }>;
  explain?: { forced?: string; thresholds?: Record<string, number>; settings?: { symbols_limited?: boolean } };
}

describe('/checkexplain and /plugins/neural/status', () => {
  let plain: Rig;
  let neural: Rig;
  before(async () => {
    plain = await startRig();
    neural = await startRig({ files: { 'local.d/neural.yaml': 'rules:\n  small:\n    train: { max_trains: 10, autotrain: false }\n' } });
  });
  after(async () => {
    await plain?.close();
    await neural?.close();
  });

  it('answers the history row of a scan, explained, and keeps it in the history', async () => {
    const r = await rawRequest(plain.controllerPort, 'POST', '/checkexplain', { Password: READ_PASS }, GTUBE);
    assert.equal(r.status, 200);
    const row = JSON.parse(r.body.toString()) as Row;
    assert.equal(row.action, 'reject');
    assert.equal(row['message-id'], 'gtube-explain@spammer.example');
    assert.ok(row.symbols.GTUBE, 'GTUBE symbol listed');
    assert.equal(row.explain?.forced, 'GTUBE');
    // Envelope as /checkv2 reads it: headers (or query parameters).
    const only = JSON.stringify({ symbols_enabled: ['LOCAL_MAPS_CHECK', 'LOCAL_FROM_LISTED', 'LOCAL_IP_LISTED'] });
    const r2 = await rawRequest(plain.controllerPort, 'POST', '/checkexplain?ip=192.0.2.1&from=a@spammer.example', { Password: READ_PASS, Settings: only }, PLAIN);
    const row2 = JSON.parse(r2.body.toString()) as Row;
    assert.equal(row2.score, 5.5);
    assert.equal(row2.action, 'greylist');
    assert.deepEqual(row2.symbols.LOCAL_FROM_LISTED?.options, ['spammer.example']);
    assert.equal(row2.symbols.LOCAL_IP_LISTED?.group, 'local');
    assert.equal(row2.explain?.thresholds?.greylist, 4);
    assert.equal(row2.explain?.settings?.symbols_limited, true);
    assert.equal(row2.ip, '192.0.2.1');
    // Both scans are in the history, as the reply showed them.
    let rows: Row[] = [];
    for (let i = 0; i < 50 && rows.length < 2; i++) {
      rows = (JSON.parse((await rawRequest(plain.controllerPort, 'GET', '/history', { Password: READ_PASS })).body.toString()) as { rows: Row[] }).rows;
      if (rows.length < 2) await new Promise((res) => setTimeout(res, 50));
    }
    const stored = rows.find((x) => x['message-id'] === 'local-explain@example.org');
    assert.equal(stored?.score, 5.5);
    assert.deepEqual(Object.keys(stored!.symbols).sort(), Object.keys(row2.symbols).sort());
  });

  it('neural status: off without rules, each rule with its store figures when configured', async () => {
    const off = JSON.parse((await rawRequest(plain.controllerPort, 'GET', '/plugins/neural/status', { Password: READ_PASS })).body.toString()) as { enabled: boolean; rules: unknown[] };
    assert.deepEqual(off, { enabled: false, rules: [] });
    const r = await rawRequest(neural.controllerPort, 'GET', '/plugins/neural/status', { Password: READ_PASS });
    assert.equal(r.status, 200);
    const on = JSON.parse(r.body.toString()) as { enabled: boolean; rules: Array<Record<string, unknown>> };
    assert.equal(on.enabled, true);
    assert.equal(on.rules.length, 1);
    assert.deepEqual(
      { ...on.rules[0], training: undefined },
      { name: 'small', symbol_spam: 'NEURAL_SPAM', symbol_ham: 'NEURAL_HAM', loaded_version: 0, store_version: 0, vectors: { spam: 0, ham: 0 }, max_trains: 10, training: undefined },
    );
  });
});
