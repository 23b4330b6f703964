// Controller error bodies carry request data (a Classifier header, a Message-ID) as a JSON
// string: a quote in that data cannot end the string and add keys such as "success":true, and
// the body stays valid JSON. The ordinary texts keep Rspamd 3.4's bytes.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rspamdMessage } from '../message/fixtures.js';
import { request, startTestController, type RunningController } from './harness.js';

let ctl: RunningController;

before(async () => {
  ctl = await startTestController('{ bind: "127.0.0.1:0", password: readpass, enable_password: enablepass, auth_fail_limit: 0 }');
});

after(async () => {
  await ctl?.close();
});

const learn = (path: string, headers: Array<[string, string]>, body: Buffer) =>
  request(ctl.port, { method: 'POST', path, headers: [['Password', 'enablepass'], ...headers], body });

describe('controller error bodies', () => {
  it('a Classifier header with quotes stays inside the error string', async () => {
    const wanted = 'x","success":true,"y":"\\\tz';
    const r = await learn('/learnspam', [['Classifier', wanted]], rspamdMessage('spam.eml'));
    assert.equal(r.status, 404);
    const body = JSON.parse(r.body.toString('utf8')) as Record<string, unknown>;
    assert.deepEqual(body, { error: `cannot find classifier with name ${wanted}` });
  });

  it('a Message-ID with quotes stays inside the "already learned" error string', async () => {
    const mid = 'inject","success":true,"x":"\\@example.com';
    const msg = Buffer.from(rspamdMessage('spam.eml').toString('latin1').replace(/^Message-ID: .*$/m, `Message-ID: <${mid}>`), 'latin1');
    const first = await learn('/learnspam', [], msg);
    assert.equal(first.status, 200, first.body.toString());
    const again = await learn('/learnspam', [], msg);
    assert.equal(again.status, 208);
    assert.deepEqual(JSON.parse(again.body.toString('utf8')), { error: `<${mid}> has been already learned as spam, ignore it` });
  });

  it('an ordinary text keeps the bytes Rspamd 3.4 sends', async () => {
    const r = await learn('/learnspam', [['Classifier', 'nosuch']], rspamdMessage('spam.eml'));
    assert.equal(r.status, 404);
    assert.equal(r.body.toString('utf8'), '{"error":"cannot find classifier with name nosuch"}');
  });
});
