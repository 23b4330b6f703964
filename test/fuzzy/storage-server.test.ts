// The storage worker over real UDP: the packet layouts of fuzzy.md §4, add/check/delete/stat/
// ping, shingle matches, the encrypted variant and update permissions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { readFileSync } from 'node:fs';
import { parseMessage } from '../../src/message/parse-message.js';
import { generateKeypair } from '../../src/crypto/keypair.js';
import { exchange, randomTag } from '../../src/rule-libs/fuzzy/client.js';
import { shingles, textDigest } from '../../src/rule-libs/fuzzy/digest.js';
import { startFuzzyServer } from '../../src/fuzzy-storage/storage-server.js';
import {
  CMD_BYTES, FUZZY_CHECK, FUZZY_DEL, FUZZY_PING, FUZZY_STAT, FUZZY_WRITE, REPLY_BYTES, REPLY_V1_BYTES, REPLY_V2_BYTES,
  SHINGLE_CMD_BYTES, V2_CAPABILITY, decodeCommand, decodeReply, encodeCommand, encodeReply, type FuzzyCommand, type FuzzyCommandCode,
} from '../../src/rule-libs/fuzzy/wire.js';
import { ENC_HEADER_BYTES, decryptCommand, encryptCommand } from '../../src/rule-libs/fuzzy/wire-crypt.js';
import { stemmedWords } from '../../src/rule-libs/fuzzy/words.js';
import { MemoryFuzzyStore } from './memory-store.js';

const MSGS = '/work/shared/fixtures/rspamd-test-messages';
const IO = { timeoutMs: 500, retransmits: 1 };

function cmd(code: FuzzyCommandCode, digest: Buffer, extra: Partial<FuzzyCommand> = {}): FuzzyCommand {
  return { version: 4, cmd: code, flag: 0, value: 0, tag: randomTag(), digest, ...extra };
}

test('command and reply layouts follow the spec byte for byte', () => {
  const digest = Buffer.alloc(64, 0xab);
  const sh = Array.from({ length: 32 }, (_, i) => BigInt(i) * 0x0102030405060708n);
  const raw = encodeCommand({ version: 4, cmd: FUZZY_WRITE, flag: 7, value: -3, tag: 0xdeadbeef, digest, shingles: sh });
  assert.equal(raw.length, SHINGLE_CMD_BYTES);
  assert.equal(SHINGLE_CMD_BYTES, 332);
  assert.deepEqual([...raw.subarray(0, 4)], [4, 1, 32, 7]);
  assert.equal(raw.readInt32LE(4), -3);
  assert.equal(raw.readUInt32LE(8), 0xdeadbeef);
  assert.ok(raw.subarray(12, 76).equals(digest));
  assert.equal(raw.readBigUInt64LE(76 + 8 * 5), sh[5]);
  assert.deepEqual(decodeCommand(raw), { version: 4, cmd: 1, flag: 7, value: -3, tag: 0xdeadbeef, digest, shingles: sh });
  assert.equal(encodeCommand({ version: 4, cmd: FUZZY_CHECK, flag: 0, value: 0, tag: 1, digest }).length, CMD_BYTES);
  // Epoch 1.0 commands must be exactly sized; a bad command code or shingle count is refused.
  const v3 = encodeCommand({ version: 3, cmd: 0, flag: 0, value: 0, tag: 1, digest });
  assert.ok(decodeCommand(v3));
  assert.equal(decodeCommand(Buffer.concat([v3, Buffer.alloc(3)])), undefined);
  const bad = Buffer.from(v3); bad[1] = 9;
  assert.equal(decodeCommand(bad), undefined);
  const bad2 = Buffer.from(v3); bad2[2] = 5;
  assert.equal(decodeCommand(bad2), undefined);

  const r = { value: 12, flag: 3, tag: 99, prob: 0.75, digest, ts: 1_700_000_000, extra: [{ value: 4, flag: 9 }] };
  const v1 = encodeReply(r, 'v1');
  const v11 = encodeReply(r, 'v1.1');
  const v2 = encodeReply(r, 'v2');
  assert.deepEqual([v1.length, v11.length, v2.length], [REPLY_V1_BYTES, REPLY_BYTES, REPLY_V2_BYTES]);
  assert.equal(v11.readFloatLE(12), 0.75);
  assert.equal(v11.readUInt32LE(80), 1_700_000_000);
  assert.equal(v2.readUInt8(84), 1);
  assert.deepEqual([v2.readInt32LE(88), v2.readUInt32LE(92)], [4, 9]);
  assert.deepEqual(decodeReply(v2), r);
  assert.deepEqual(decodeReply(v1), { value: 12, flag: 3, tag: 99, prob: 0.75 });
});

test('encrypted commands: 84-byte header, only the right key opens them', () => {
  const server = generateKeypair();
  const client = generateKeypair();
  const plain = encodeCommand(cmd(FUZZY_CHECK, Buffer.alloc(64, 1)));
  const { packet } = encryptCommand(plain, server.publicKey, client);
  assert.equal(packet.length, ENC_HEADER_BYTES + CMD_BYTES);
  assert.equal(packet.subarray(0, 4).toString(), 'rsfe');
  assert.ok(packet.subarray(4, 12).equals(Buffer.from(server.publicKey.subarray(0, 8))));
  assert.ok(decryptCommand(packet, [server])?.plain.equals(plain));
  assert.equal(decryptCommand(packet, [generateKeypair()]), undefined);
  const tampered = Buffer.from(packet); tampered[tampered.length - 1]! ^= 1;
  assert.equal(decryptCommand(tampered, [server]), undefined);
});

test('storage worker: write, check (exact and by shingles), stat, ping, delete over UDP', async () => {
  const store = new MemoryFuzzyStore();
  const srv = await startFuzzyServer({ store, bind: '127.0.0.1:0' });
  try {
    const text = parseText('ham.eml');
    const words = stemmedWords(text);
    const digest = textDigest(words);
    const sh = shingles(words);
    const w = cmd(FUZZY_WRITE, digest, { flag: 2, value: 5, shingles: sh });
    let res = await exchange(srv.address, [w], IO);
    assert.deepEqual(pick(res.replies.get(w.tag)), { value: 0, prob: 1 });

    const c = cmd(FUZZY_CHECK, digest, { shingles: sh });
    res = await exchange(srv.address, [c], IO);
    const hit = res.replies.get(c.tag)!;
    assert.deepEqual(pick(hit), { value: 5, prob: 1 });
    assert.equal(hit.flag, 2);
    assert.ok(hit.digest?.equals(digest));

    // An edited copy: another digest, but its shingles mostly agree.
    const edited = stemmedWords(text.replace(/^Hi Kenny/m, 'Dear Sir').replace(/document/, 'paper'));
    const ce = cmd(FUZZY_CHECK, textDigest(edited), { shingles: shingles(edited) });
    const unrelated = stemmedWords(parseText('spam_message.eml'));
    const cu = cmd(FUZZY_CHECK, textDigest(unrelated), { shingles: shingles(unrelated) });
    res = await exchange(srv.address, [ce, cu], IO);
    const fuzzy = res.replies.get(ce.tag)!;
    assert.ok(fuzzy.prob > 0.5, `edited copy prob ${fuzzy.prob}`);
    assert.ok(!ce.digest.equals(digest));
    assert.ok(fuzzy.digest?.equals(digest), 'the reply names the stored digest');
    assert.equal(res.replies.get(cu.tag)!.prob, 0);

    const st = cmd(FUZZY_STAT, Buffer.alloc(64));
    const pg = cmd(FUZZY_PING, Buffer.alloc(64), { value: 4242 });
    res = await exchange(srv.address, [st, pg], IO);
    assert.equal(res.replies.get(st.tag)!.prob, 1);
    assert.deepEqual(pick(res.replies.get(pg.tag)), { value: 4242, prob: 1 });

    const d = cmd(FUZZY_DEL, digest, { flag: 2 });
    await exchange(srv.address, [d], IO);
    const c2 = cmd(FUZZY_CHECK, digest);
    res = await exchange(srv.address, [c2], IO);
    assert.equal(res.replies.get(c2.tag)!.prob, 0);
    const st2 = await srv.stats();
    assert.deepEqual(st2['fuzzy_checked'], [0, 4, 0]);
    assert.equal(st2['fuzzy_stored'], 0);
  } finally {
    await srv.close();
  }
});

test('storage worker: v1 and v2 reply sizes follow the client version', async () => {
  const srv = await startFuzzyServer({ store: new MemoryFuzzyStore(), bind: '127.0.0.1:0' });
  const sock = dgram.createSocket('udp4');
  try {
    for (const [version, size] of [[3, 16], [4, 96], [4 | V2_CAPABILITY, 144], [5, 144]] as const) {
      const reply = await new Promise<Buffer>((resolve) => {
        sock.once('message', resolve);
        sock.send(encodeCommand(cmd(FUZZY_CHECK, Buffer.alloc(64, 2), { version })), srv.address.port, '127.0.0.1');
      });
      assert.equal(reply.length, size, `version ${version}`);
    }
  } finally {
    sock.close();
    await srv.close();
  }
});

test('storage worker: encrypted requests, encrypted_only and update permissions', async () => {
  const kp = generateKeypair();
  const store = new MemoryFuzzyStore();
  const srv = await startFuzzyServer({ store, bind: '127.0.0.1:0', keypairs: [kp], encryptedOnly: true, allowUpdate: ['192.0.2.0/24'] });
  try {
    const digest = Buffer.alloc(64, 5);
    const plain = cmd(FUZZY_CHECK, digest);
    let res = await exchange(srv.address, [plain], IO);
    assert.equal(res.replies.get(plain.tag)!.value, 415);

    const enc = { ...IO, serverPublicKey: kp.publicKey, localKeypair: generateKeypair() };
    const w = cmd(FUZZY_WRITE, digest, { flag: 1, value: 1 });
    res = await exchange(srv.address, [w], enc);
    assert.equal(res.replies.get(w.tag)!.value, 503, 'loopback is not in allow_update');
    await store.add({ digest: digest.toString('hex'), flag: 1, weight: 3 }, 60);
    const c = cmd(FUZZY_CHECK, digest);
    res = await exchange(srv.address, [c], enc);
    assert.deepEqual(pick(res.replies.get(c.tag)), { value: 3, prob: 1 });

    // A packet for another key gets no reply at all.
    const lost = cmd(FUZZY_CHECK, digest);
    res = await exchange(srv.address, [lost], { ...enc, serverPublicKey: generateKeypair().publicKey, timeoutMs: 150, retransmits: 0 });
    assert.equal(res.unanswered, 1);
  } finally {
    await srv.close();
  }
});

function parseText(file: string): string {
  return parseMessage(readFileSync(`${MSGS}/${file}`)).textParts[0]!.text;
}

function pick(r: { value: number; prob: number } | undefined): { value: number; prob: number } | undefined {
  return r && { value: r.value, prob: r.prob };
}

test('storage worker: a confident check re-arms the entry\'s expiry (REFRESH)', async () => {
  const store = new MemoryFuzzyStore();
  const srv = await startFuzzyServer({ store, bind: '127.0.0.1:0', expireSeconds: 3600 });
  try {
    const digest = Buffer.alloc(64, 9);
    await store.add({ digest: digest.toString('hex'), flag: 1, weight: 2 }, 5);
    const before = store.entries.get(digest.toString('hex'))!.expires;
    const c = cmd(FUZZY_CHECK, digest);
    await exchange(srv.address, [c], IO);
    await new Promise((r) => setTimeout(r, 50));
    const e = store.entries.get(digest.toString('hex'))!;
    assert.ok(e.expires >= before + 3000, `expiry ${e.expires - before}s later`);
    assert.equal(e.value, 2, 'a refresh adds nothing');
  } finally {
    await srv.close();
  }
});
