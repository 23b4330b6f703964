// POST /whatif against a real controller with real scans in its history: the prediction for a
// proposed weight or threshold is checked against what the scans really become once the change
// is saved and the same messages are scanned again. Also: the explanation history rows keep
// (forced actions, symbol groups, thresholds), and refusals with the save endpoints' texts.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ENABLE_PASS, rawRequest, READ_PASS, startRig, type Rig } from './edit-harness.js';

const GTUBE = 'From: spammer@spammer.example\r\nTo: user@example.net\r\nSubject: gtube\r\nMessage-ID: <gtube-whatif@spammer.example>\r\n\r\nXJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X\r\n';
const msg = (n: number) => `From: someone@example.org\r\nTo: user@example.net\r\nSubject: message ${n}\r\nMessage-ID: <whatif-${n}@example.org>\r\nDate: Sun, 22 Nov 2026 02:00:00 +0000\r\n\r\nHello number ${n}.\r\n`;
/**
 * Envelopes that give different local-map scores: none, sender 3.5, IP 2, both 5.5, weighted
 * sender 7 + IP 9. Only the local-map rule runs (Settings), so no DNS answer moves a score.
 */
const ONLY_LOCAL = JSON.stringify({ symbols_enabled: ['LOCAL_MAPS_CHECK', 'LOCAL_FROM_LISTED', 'LOCAL_IP_LISTED'] });
const ENVELOPES: Array<Record<string, string>> = [
  { IP: '198.51.100.7', From: 'a@example.org' },
  { IP: '198.51.100.7', From: 'a@spammer.example' },
  { IP: '192.0.2.1', From: 'a@example.org' },
  { IP: '192.0.2.1', From: 'a@spammer.example' },
  { IP: '10.1.2.3', From: 'a@weighted.example' },
];

let rig: Rig;
const auth = { Password: READ_PASS };

interface Row {
  score: number;
  action: string;
  'message-id'?: string;
  symbols: Record<string, { group?: string; score: number; metric_score: number }>;
  explain?: { thresholds?: Record<string, number>; forced?: string };
}
interface Answer {
  rows: number;
  changed: number;
  fixed: number;
  changes: Array<{ index: number; 'message-id'?: string; action_before: string; action_after: string }>;
}

async function history(): Promise<Row[]> {
  const r = await rawRequest(rig.controllerPort, 'GET', '/history', auth);
  return (JSON.parse(r.body.toString()) as { rows: Row[] }).rows;
}

async function waitRows(n: number): Promise<Row[]> {
  const t0 = Date.now();
  for (;;) {
    const rows = await history();
    if (rows.length >= n || Date.now() - t0 > 5000) return rows;
    await new Promise((res) => setTimeout(res, 50));
  }
}

async function whatif(body: unknown, headers: Record<string, string> = auth): Promise<{ status: number; json: unknown }> {
  const r = await rawRequest(rig.controllerPort, 'POST', '/whatif', { ...headers, 'Content-Type': 'application/json' }, JSON.stringify(body));
  return { status: r.status, json: JSON.parse(r.body.toString() || 'null') };
}

/** Scans every envelope once; resolves to Message-ID → action as the scan answered. */
async function scanAll(round: number): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (let i = 0; i < ENVELOPES.length; i++) {
    const r = await rawRequest(rig.controllerPort, 'POST', '/checkv2', { ...auth, Settings: ONLY_LOCAL, ...ENVELOPES[i]! }, msg(round * 100 + i));
    assert.equal(r.status, 200);
    out.set(`whatif-${round * 100 + i}@example.org`, (JSON.parse(r.body.toString()) as { action: string }).action);
  }
  return out;
}

describe('POST /whatif over the stored history', () => {
  before(async () => {
    rig = await startRig();
  });
  after(async () => {
    await rig?.close();
  });

  it('history rows keep the explanation: thresholds, the forcing module, symbol groups', async () => {
    await rawRequest(rig.controllerPort, 'POST', '/checkv2', auth, GTUBE);
    await scanAll(0);
    const rows = await waitRows(ENVELOPES.length + 1);
    const gtube = rows.find((r) => r['message-id'] === 'gtube-whatif@spammer.example')!;
    assert.equal(gtube.explain?.forced, 'GTUBE');
    const local = rows.find((r) => r.symbols.LOCAL_FROM_LISTED)!;
    assert.equal(local.symbols.LOCAL_FROM_LISTED!.group, 'local');
    assert.deepEqual(Object.keys(local.explain?.thresholds ?? {}).sort(), ['add header', 'greylist', 'reject']);
  });

  it('predicts, for a new weight, exactly the actions the scans get once it is saved', async () => {
    const before = await history();
    const proposal = { symbols: [{ name: 'LOCAL_IP_LISTED', value: 4.5 }] };
    const { status, json } = await whatif(proposal);
    assert.equal(status, 200);
    const answer = json as Answer;
    assert.equal(answer.rows, before.length);
    assert.equal(answer.fixed, 1, 'the GTUBE row keeps its forced action');
    // 2 → 4.5 (no action → greylist) and 5.5 → 8 (greylist → add header); 9 → 11.5 stays add header.
    assert.equal(answer.changed, 2, JSON.stringify(answer));
    // Save, scan the same messages again: each row of round 0 must end as predicted.
    const save = await rawRequest(rig.controllerPort, 'POST', '/savesymbols', { Password: ENABLE_PASS }, JSON.stringify([{ name: 'LOCAL_IP_LISTED', value: 4.5 }]));
    assert.equal(save.status, 200);
    const now = await scanAll(1);
    const predicted = new Map(answer.changes.map((c) => [c['message-id'], c.action_after]));
    for (let i = 0; i < ENVELOPES.length; i++) {
      const old = before.find((r) => r['message-id'] === `whatif-${i}@example.org`)!;
      const fresh = now.get(`whatif-${100 + i}@example.org`)!;
      assert.equal(predicted.get(`whatif-${i}@example.org`) ?? old.action, fresh, `envelope ${i}: ${JSON.stringify(ENVELOPES[i])}`);
    }
  });

  it('predicts threshold changes; the count is every row whose action moves', async () => {
    const rows = await waitRows(2 * ENVELOPES.length + 1);
    // greylist raised from 4 to 9 over add header (6): refused as the save would refuse it.
    const bad = await whatif({ actions: [15, null, 6, 9] });
    assert.equal(bad.status, 400);
    assert.match((bad.json as { error: string }).error, /greylist \(9\) is above add header \(6\)/);
    const { status, json } = await whatif({ actions: [15, null, 6, 5] });
    assert.equal(status, 200);
    const moved = rows.filter((r) => !r.explain?.forced && r.action === 'greylist' && r.score < 5);
    assert.equal(moved.length, 1, 'the row at 4.5 (IP listed, new weight) is greylisted');
    assert.equal((json as Answer).changed, moved.length);
    for (const c of (json as Answer).changes) assert.deepEqual([c.action_before, c.action_after], ['greylist', 'no action']);
  });

  it('needs the read password, refuses unknown symbols and malformed bodies', async () => {
    assert.equal((await whatif({ actions: [15, null, 6, 4] }, {})).status, 401);
    const unknown = await whatif({ symbols: [{ name: 'NO_SUCH_SYMBOL', value: 1 }] });
    assert.equal(unknown.status, 400);
    assert.match((unknown.json as { error: string }).error, /Unknown symbol: NO_SUCH_SYMBOL/);
    assert.equal((await whatif([1, 2])).status, 400);
    const get = await rawRequest(rig.controllerPort, 'GET', '/whatif', auth);
    assert.equal(get.status, 405);
  });
});
