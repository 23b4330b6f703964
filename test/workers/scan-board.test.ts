// The scan board on a real file: what a worker writes as scans start and end is what the
// supervisor reads back, in a form whose size is known; and the Message-ID peek.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { BOARD_SLOTS, makeBoardDir, MAX_FIELD_CHARS, MAX_MESSAGE_ID_PEEK_BYTES, peekMessageId, readScanBoard, ScanBoard } from '../../src/workers/scan-board.js';
import { describeInFlight, reportId } from '../../src/workers/watchdog.js';

const warnings: string[] = [];
const log = { debug() {}, info() {}, warn: (m: string) => void warnings.push(m), error() {} };

async function withBoard(run: (board: ScanBoard, path: string) => Promise<void> | void): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'mailsift-board-test-'));
  const path = join(dir, 'w.board');
  const board = ScanBoard.open(path, log);
  assert.ok(board);
  try {
    await run(board, path);
  } finally {
    board.close();
    await rm(dir, { recursive: true, force: true });
  }
}

test('scans in flight are on the board until they end, oldest first', async () => {
  await withBoard((board, path) => {
    assert.deepEqual(readScanBoard(path), { entries: [], untracked: 0 });
    const a = board.begin({ what: 'scan', messageId: 'a@example.com', queueId: 'Q1', startedAt: 2000 });
    const b = board.begin({ what: '/learnspam', startedAt: 1000 });
    const c = board.begin({ what: 'scan', queueId: 'Q3', startedAt: 3000 });
    assert.equal(board.inFlight, 3);
    assert.deepEqual(readScanBoard(path).entries, [
      { what: '/learnspam', startedAt: 1000 },
      { what: 'scan', messageId: 'a@example.com', queueId: 'Q1', startedAt: 2000 },
      { what: 'scan', queueId: 'Q3', startedAt: 3000 },
    ]);
    board.end(b);
    board.end(a);
    assert.deepEqual(readScanBoard(path).entries, [{ what: 'scan', queueId: 'Q3', startedAt: 3000 }]);
    // A freed slot is reused and the old, longer record behind the new one is not read.
    const d = board.begin({ what: 'scan', startedAt: 4000 });
    assert.deepEqual(readScanBoard(path).entries.map((e) => e.startedAt), [3000, 4000]);
    board.end(c);
    board.end(d);
    assert.deepEqual(readScanBoard(path), { entries: [], untracked: 0 });
    assert.equal(board.inFlight, 0);
  });
});

test('hostile ids are cut and cleaned so a record always fits its slot', async () => {
  await withBoard((board, path) => {
    const nasty = `"\\\n\u2028é${'x'.repeat(5000)}`;
    board.begin({ what: nasty, messageId: nasty, queueId: nasty, startedAt: 1 });
    const [e] = readScanBoard(path).entries;
    assert.ok(e);
    assert.equal(e.messageId!.length, MAX_FIELD_CHARS);
    assert.match(e.messageId!, /^\?{5}x+$/);
    assert.equal(e.queueId, e.messageId);
    assert.equal(e.what, e.messageId);
  });
});

test('beyond the slots, scans are counted as untracked and reported as such', async () => {
  await withBoard((board, path) => {
    const slots: number[] = [];
    for (let i = 0; i < BOARD_SLOTS + 3; i++) slots.push(board.begin({ what: 'scan', queueId: `Q${i}`, startedAt: 1000 + i }));
    const full = readScanBoard(path);
    assert.equal(full.entries.length, BOARD_SLOTS);
    assert.equal(full.untracked, 3);
    assert.match(describeInFlight(full, 5000), new RegExp(`^${BOARD_SLOTS + 3} in flight, oldest first: \\[scan, no Message-ID, Queue-Id Q0, running 4\\.0 s\\] .* and ${BOARD_SLOTS - 1} more$`));
    assert.equal(reportId(full), '', 'several in flight: no single id');
    for (const s of slots.slice(BOARD_SLOTS)) board.end(s);
    assert.equal(readScanBoard(path).untracked, 0);
    for (const s of slots.slice(1, BOARD_SLOTS)) board.end(s);
    const one = readScanBoard(path);
    assert.equal(describeInFlight(one, 1500), 'in flight: [scan, no Message-ID, Queue-Id Q0, running 0.5 s]');
    assert.equal(reportId(one), 'Q0');
  });
});

test('the board file has a fixed size; a missing board reads as empty', async () => {
  await withBoard(async (board, path) => {
    const size = (await readFile(path)).length;
    for (let i = 0; i < 100; i++) board.end(board.begin({ what: 'scan', messageId: 'm'.repeat(300), startedAt: i }));
    assert.equal((await readFile(path)).length, size);
  });
  assert.deepEqual(readScanBoard('/nonexistent/board'), { entries: [], untracked: 0 });
  assert.equal(describeInFlight(undefined, 0), 'its scans in flight are unknown (no scan board)');
});

test('a board that cannot be created is reported, not thrown', () => {
  warnings.length = 0;
  assert.equal(ScanBoard.open('/nonexistent-dir/x.board', log), undefined);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /cannot create the scan board/);
});

test('peekMessageId reads the header cheaply: folded, any case, brackets removed, body ignored', () => {
  const m = (s: string) => Buffer.from(s);
  assert.equal(peekMessageId(m('From: a@b\r\nMessage-ID: <x1@example.com>\r\n\r\nbody')), 'x1@example.com');
  assert.equal(peekMessageId(m('message-id:\r\n\t<folded@example.com>\r\nSubject: s\r\n\r\n')), 'folded@example.com');
  assert.equal(peekMessageId(m('MESSAGE-ID: bare-id\n\n')), 'bare-id');
  assert.equal(peekMessageId(m('Subject: s\r\n\r\nMessage-ID: <in-body@x>\r\n')), undefined, 'the body is not headers');
  assert.equal(peekMessageId(m('X-Message-ID: <no@x>\r\n\r\n')), undefined);
  assert.equal(peekMessageId(m('')), undefined);
  assert.equal(peekMessageId(m('Message-ID:')), undefined);
  // Past the peek window the header is not looked for: the cost is bounded whatever the message.
  const filler = `X-Pad: ${'p'.repeat(MAX_MESSAGE_ID_PEEK_BYTES)}\r\n`;
  assert.equal(peekMessageId(m(`${filler}Message-ID: <late@x>\r\n\r\n`)), undefined);
  const many = 'X: y\r\n'.repeat(Math.ceil(MAX_MESSAGE_ID_PEEK_BYTES / 6) + 10);
  assert.equal(peekMessageId(m(`${many}Message-ID: <late@x>\r\n\r\n`)), undefined);
  assert.equal(peekMessageId(m(`X: y\r\nMessage-ID: <early@x>\r\n${many}\r\n`)), 'early@x');
});

test('a board directory is named after its process; those of dead processes are removed', async () => {
  const dir = makeBoardDir(log);
  assert.ok(dir);
  try {
    assert.match(basename(dir), new RegExp(`^mailsift-board-${process.pid}-`));
    // A process that has exited: its pid names a leftover directory.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const leftover = join(dirname(dir), `mailsift-board-${dead.stdout}-leftover`);
    mkdirSync(leftover);
    const mine = join(dirname(dir), `mailsift-board-${process.pid}-alive`);
    mkdirSync(mine);
    const again = makeBoardDir(log);
    assert.ok(again);
    assert.equal(existsSync(leftover), false, "the dead process's directory is removed");
    assert.equal(existsSync(mine), true, "a live process's directory is kept");
    await rm(mine, { recursive: true });
    await rm(again, { recursive: true });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
