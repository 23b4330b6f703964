// /plugins/selectors/* on a real controller over a socket (plugins.md §a.5): the listings, the
// validity check the web UI asks on every keystroke, and check_message over a message with scan
// headers, including the error replies (404 missing, 500 invalid with the parse error, 400 empty
// body, 403 for the read-only password).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { EXTRACTORS } from '../../src/selectors/extractors.js';
import { TRANSFORMS } from '../../src/selectors/transforms.js';
import { ENVELOPE, messagePath } from '../selectors/cases.js';
import { ENABLE_PASS, rawRequest, READ_PASS, startRig, type Rig } from './edit-harness.js';

let rig: Rig;
before(async () => {
  rig = await startRig();
});
after(async () => {
  await rig.close();
});

const call = (method: 'GET' | 'POST', path: string, body = '', headers: Record<string, string> = {}, pass = ENABLE_PASS) =>
  rawRequest(rig.controllerPort, method, path, { Password: pass, ...headers }, body);
const json = (b: Buffer): unknown => JSON.parse(b.toString());
const q = (selector: string): string => `selector=${encodeURIComponent(selector)}`;

describe('/plugins/selectors', () => {
  it('list_extractors and list_transforms list every function with its description', async () => {
    const ex = json((await call('GET', '/plugins/selectors/list_extractors')).body) as Record<string, { description: string }>;
    assert.deepEqual(Object.keys(ex).sort(), Object.keys(EXTRACTORS).sort());
    assert.match(ex.header!.description, /header/i);
    const tr = json((await call('GET', '/plugins/selectors/list_transforms')).body) as Record<string, { description: string; types: Record<string, boolean> }>;
    assert.deepEqual(Object.keys(tr).sort(), Object.keys(TRANSFORMS).sort());
    assert.deepEqual(tr.join!.types, { string_list: true });
  });

  it('check_selector: success for a valid selector, the parse error for an invalid one, 404 when missing', async () => {
    const ok = await call('GET', `/plugins/selectors/check_selector?${q("urls:get_tld.uniq.sort.join(',')")}`);
    assert.equal(ok.status, 200);
    assert.deepEqual(json(ok.body), { success: true });
    const bad = await call('GET', `/plugins/selectors/check_selector?${q("header('Subject'")}`);
    assert.equal(bad.status, 200);
    const body = json(bad.body) as { success: boolean; error: string };
    assert.equal(body.success, false);
    assert.match(body.error, /expected '\)'.* at position 16/);
    for (const path of ['/plugins/selectors/check_selector', '/plugins/selectors/check_selector?selector=']) {
      const r = await call('GET', path);
      assert.equal(r.status, 404);
      assert.match(r.body.toString(), /missing selector/);
    }
  });

  it('check_message applies the selector to the message with the scan headers', async () => {
    const msg = readFileSync(messagePath('attachments.eml'));
    const r = await call('POST', `/plugins/selectors/check_message?${q("from('smtp'):addr;rcpts('mime'):domain.lower;ip.ipmask(16);header('Subject')")}`, msg.toString('latin1'), ENVELOPE);
    assert.equal(r.status, 200);
    assert.deepEqual(json(r.body), {
      success: true,
      data: ['Bounce@Lists.Example.org', 'example.com', 'example.com', 'sub.example.co.uk', '198.51.0.0', 'Hello Wörld offer Today'],
    });
    const none = await call('POST', `/plugins/selectors/check_message?${q("header('X-Missing')")}`, msg.toString('latin1'));
    assert.deepEqual(json(none.body), { success: true });
  });

  it('check_message errors: 500 with the parse error, 404 without a selector, 400 without a body', async () => {
    const bad = await call('POST', `/plugins/selectors/check_message?${q('header(Subject).nosuch')}`, 'Subject: x\r\n\r\nbody\r\n');
    assert.equal(bad.status, 500);
    assert.match((json(bad.body) as { error: string }).error, /unknown transform nosuch at position 16/);
    const args = await call('POST', `/plugins/selectors/check_message?${q("time('yesterday')")}`, 'Subject: x\r\n\r\nbody\r\n');
    assert.equal(args.status, 500);
    assert.match((json(args.body) as { error: string }).error, /invalid arguments for time/);
    assert.equal((await call('POST', '/plugins/selectors/check_message', 'Subject: x\r\n\r\nbody\r\n')).status, 404);
    assert.equal((await call('POST', `/plugins/selectors/check_message?${q('ip')}`)).status, 400);
  });

  it('needs the enable password, as in Rspamd 3.4', async () => {
    const r = await call('GET', '/plugins/selectors/list_extractors', '', { 'X-Forwarded-For': '192.0.2.1' }, READ_PASS);
    assert.notEqual(r.status, 200);
  });
});
