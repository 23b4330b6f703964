// Peer network lists (src/http/peer-networks.ts) and the `file_input_peers` keys that use them:
// addresses and networks of both families, IPv4-mapped peers, and configuration mistakes
// reported with their key path instead of being dropped.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config/load.js';
import { isConfigError, type ConfigIssue } from '../../src/config/errors.js';
import { LOOPBACK_NETWORKS, parseNetwork, PeerNetworks } from '../../src/http/peer-networks.js';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';

describe('peer networks', () => {
  it('parses addresses and networks, and refuses what is neither', () => {
    assert.deepEqual(parseNetwork('127.0.0.0/8'), { address: '127.0.0.0', family: 4, prefix: 8 });
    assert.deepEqual(parseNetwork('::1'), { address: '::1', family: 6, prefix: 128 });
    assert.deepEqual(parseNetwork('[2001:db8::]/32'), { address: '2001:db8::', family: 6, prefix: 32 });
    assert.deepEqual(parseNetwork('::ffff:10.1.2.3'), { address: '10.1.2.3', family: 4, prefix: 32 });
    for (const bad of ['', 'localhost', '10.0.0.0/33', '::/129', '10.0.0.0/', '10.0.0.0/a', '10.0.0.0/-1', '300.1.1.1']) {
      assert.equal(parseNetwork(bad), undefined, bad);
    }
  });

  it('matches peers as Node reports them, IPv4-mapped ones included', () => {
    const loop = new PeerNetworks(LOOPBACK_NETWORKS);
    for (const peer of ['127.0.0.1', '127.0.0.2', '127.255.255.254', '::1', '::ffff:127.0.0.1']) assert.ok(loop.has(peer), peer);
    for (const peer of ['10.0.0.1', '::2', '::ffff:10.0.0.1', '', 'garbage']) assert.ok(!loop.has(peer), peer);
    const one = new PeerNetworks(['127.0.0.1', '2001:db8::/32']);
    assert.ok(one.has('127.0.0.1'));
    assert.ok(!one.has('127.0.0.2'));
    assert.ok(one.has('2001:db8:1::5'));
    assert.ok(!new PeerNetworks([]).has('127.0.0.1'), 'an empty list lets nobody in');
    assert.throws(() => new PeerNetworks(['nope']), /"nope" is not an IP address or network/);
  });
});

describe('file_input_peers', () => {
  it('defaults to loopback on both workers and takes a list', async () => {
    const dflt = await makeConfDir({ 'mailsift.yaml': 'data_dir: data\n' });
    const listed = await makeConfDir({ 'mailsift.yaml': 'workers:\n  normal:\n    file_input_peers: ["10.0.0.0/8"]\n  controller:\n    file_input_peers: []\ndata_dir: data\n' });
    try {
      const a = await loadConfig(dflt);
      assert.deepEqual(a.workers.normal.fileInputPeers, [...LOOPBACK_NETWORKS]);
      assert.deepEqual(a.workers.controller.fileInputPeers, [...LOOPBACK_NETWORKS]);
      const b = await loadConfig(listed);
      assert.deepEqual(b.workers.normal.fileInputPeers, ['10.0.0.0/8']);
      assert.deepEqual(b.workers.controller.fileInputPeers, []);
    } finally {
      await removeConfDir(dflt);
      await removeConfDir(listed);
    }
  });

  it('every bad entry is a config error with its key path', async () => {
    const dir = await makeConfDir({ 'mailsift.yaml': 'workers:\n  normal:\n    file_input_peers: ["127.0.0.1", "localhost", "10.0.0.0/40"]\n' });
    let issues: readonly ConfigIssue[] = [];
    try {
      await loadConfig(dir);
      assert.fail('accepted');
    } catch (err) {
      assert.ok(isConfigError(err), String(err));
      issues = err.issues;
    } finally {
      await removeConfDir(dir);
    }
    assert.deepEqual(issues.map((i) => i.path), ['workers.normal.file_input_peers[1]', 'workers.normal.file_input_peers[2]']);
    assert.match(issues[0]!.expected, /IP address or network/);
  });
});
