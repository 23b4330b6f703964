// Shm and File on the controller's scan and learn endpoints (Rspamd's controller loads the
// message the same way as the scanner): read after authentication, only from the peers in
// workers.controller.file_input_peers, errors named, never an empty message learned or scanned.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SHM_DIR } from '../../src/protocol/message-source.js';
import { exchange, parseReply, type HttpReply } from '../protocol/harness.js';
import { MESSAGES, startTestController, type RunningController } from './harness.js';

const GTUBE = readFileSync('/work/shared/fixtures/scan/messages/gtube.eml');
const SPAM = readFileSync(join(MESSAGES, 'spam.eml'));

describe('controller: Shm and File message sources', () => {
  let ctl: RunningController;
  const made: string[] = [];
  const segment = async (data: Buffer): Promise<string> => {
    const name = `mailsift-ctl-${process.pid}-${randomBytes(6).toString('hex')}`;
    await writeFile(join(SHM_DIR, name), data, { mode: 0o600 });
    made.push(join(SHM_DIR, name));
    return `/${name}`;
  };
  before(async () => {
    // secure_ip names another address so that loopback needs the passwords whatever the default.
    ctl = await startTestController('{ bind: "127.0.0.1:0", password: readpass, enable_password: enablepass, secure_ip: ["192.0.2.1"], file_input_peers: ["127.0.0.1"] }');
  });
  after(async () => {
    await ctl?.close();
    for (const p of made) await unlink(p).catch(() => undefined);
  });

  const send = async (path: string, headers: Array<[string, string]>, localAddress = '127.0.0.1'): Promise<HttpReply> => {
    let head = `GET ${path} HTTP/1.1\r\nConnection: close\r\n`;
    for (const [k, v] of headers) head += `${k}: ${v}\r\n`;
    return parseReply((await exchange(ctl.port, Buffer.from(`${head}Content-Length: 0\r\n\r\n`), { localAddress })).data);
  };

  it('/checkv2 scans the segment', async () => {
    const r = await send('/checkv2', [['Password', 'readpass'], ['Shm', await segment(GTUBE)]]);
    assert.equal(r.status, 200, r.reason);
    const res = JSON.parse(r.body.toString()) as { action: string; symbols: Record<string, unknown> };
    assert.equal(res.action, 'reject');
    assert.ok('GTUBE' in res.symbols);
  });

  it('/learnspam learns the message a File names, with an empty body', async () => {
    const file = join(SHM_DIR, `mailsift-ctl-file-${process.pid}-${randomBytes(4).toString('hex')}`);
    await writeFile(file, SPAM);
    made.push(file);
    const before = await ctl.stores.bayes.totals({ classifier: 'bayes', user: '' });
    const r = await send('/learnspam', [['Password', 'enablepass'], ['File', file]]);
    assert.equal(r.status, 200, r.reason);
    assert.equal(r.body.toString(), '{"success":true}');
    const after = await ctl.stores.bayes.totals({ classifier: 'bayes', user: '' });
    assert.equal(after.learnsSpam, before.learnsSpam + 1);
  });

  it('a segment that cannot be read is an error naming it; nothing is learned', async () => {
    const name = `/mailsift-ctl-missing-${randomBytes(6).toString('hex')}`;
    const before = await ctl.stores.bayes.totals({ classifier: 'bayes', user: '' });
    const r = await send('/learnham', [['Password', 'enablepass'], ['Shm', name]]);
    assert.equal(r.status, 503);
    assert.equal(r.reason, `Cannot open shm segment (${name}): No such file or directory`);
    const after = await ctl.stores.bayes.totals({ classifier: 'bayes', user: '' });
    assert.equal(after.learnsHam, before.learnsHam);
  });

  it('authentication comes first; a peer outside the list gets 403', async () => {
    const shm = await segment(GTUBE);
    const unauth = await send('/checkv2', [['Shm', `/mailsift-ctl-nothing-${randomBytes(6).toString('hex')}`]]);
    assert.equal(unauth.status, 401, 'no password: refused before any segment is opened');
    const other = await send('/checkv2', [['Password', 'readpass'], ['Shm', shm]], '127.0.0.2');
    assert.equal(other.status, 403);
    assert.equal(other.reason, 'File and Shm message sources are not allowed from 127.0.0.2 (workers.controller.file_input_peers)');
  });
});
