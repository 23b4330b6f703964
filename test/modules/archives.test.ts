// Archive member names read from real ZIP, RAR 4, RAR 5 and 7z bytes built here by their format
// specifications (APPNOTE.TXT; RARLAB's technote for RAR 4 and RAR 5; 7-Zip's 7zFormat.txt).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crc32 } from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readArchive, MAX_ARCHIVE_MEMBERS } from '../../src/modules/mime/archive-read.js';
import { meta, names, scanner, symbol } from './helpers.js';

interface Entry { name: string; data?: string; encrypted?: boolean }

/** A stored (uncompressed) ZIP: local headers, then the central directory and its end record. */
function zip(entries: Entry[]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const data = Buffer.from(e.data ?? 'x');
    const flags = (e.encrypted ? 1 : 0) | 0x800;
    const crc = crc32(data);
    const lh = Buffer.alloc(30);
    lh.writeUInt32LE(0x04034b50, 0);
    lh.writeUInt16LE(20, 4);
    lh.writeUInt16LE(flags, 6);
    lh.writeUInt32LE(crc, 14);
    lh.writeUInt32LE(data.length, 18);
    lh.writeUInt32LE(data.length, 22);
    lh.writeUInt16LE(name.length, 26);
    const cd = Buffer.alloc(46);
    cd.writeUInt32LE(0x02014b50, 0);
    cd.writeUInt16LE(20, 4);
    cd.writeUInt16LE(20, 6);
    cd.writeUInt16LE(flags, 8);
    cd.writeUInt32LE(crc, 16);
    cd.writeUInt32LE(data.length, 20);
    cd.writeUInt32LE(data.length, 24);
    cd.writeUInt16LE(name.length, 28);
    cd.writeUInt32LE(offset, 42);
    locals.push(lh, name, data);
    central.push(cd, name);
    offset += 30 + name.length + data.length;
  }
  const cdir = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cdir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cdir, end]);
}

/** RAR 4: marker block, main header, one file header per entry (stored data), end block. */
function rar4(entries: Entry[], encryptedHeaders = false): Buffer {
  const block = (type: number, flags: number, body: Buffer): Buffer => {
    const h = Buffer.alloc(7);
    h[2] = type;
    h.writeUInt16LE(flags, 3);
    h.writeUInt16LE(7 + body.length, 5);
    return Buffer.concat([h, body]);
  };
  const out = [Buffer.from('Rar!\x1a\x07\x00', 'latin1'), block(0x73, encryptedHeaders ? 0x0080 : 0, Buffer.alloc(6))];
  for (const e of entries) {
    const name = Buffer.from(e.name, 'latin1');
    const data = Buffer.from(e.data ?? 'x');
    const body = Buffer.alloc(25 + name.length);
    body.writeUInt32LE(data.length, 0); // packed size
    body.writeUInt32LE(data.length, 4); // unpacked size
    body[8] = 2; // host OS: Windows
    body.writeUInt32LE(crc32(data), 9);
    body[17] = 29; // version needed
    body[18] = 0x30; // method: store
    body.writeUInt16LE(name.length, 19);
    name.copy(body, 25);
    out.push(block(0x74, 0x8000 | (e.encrypted ? 0x04 : 0), body), data);
  }
  out.push(block(0x7b, 0x4000, Buffer.alloc(0)));
  return Buffer.concat(out);
}

const v = (n: number): Buffer => {
  const bytes: number[] = [];
  do {
    let b = n & 0x7f;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    bytes.push(b);
  } while (n > 0);
  return Buffer.from(bytes);
};

/** RAR 5: signature, main header, file headers (with an encryption extra record when asked), end. */
function rar5(entries: Entry[]): Buffer {
  const header = (type: number, flags: number, rest: Buffer[], extra?: Buffer, dataSize?: number): Buffer => {
    const fields = [v(type), v(flags)];
    if (extra) fields.push(v(extra.length));
    if (dataSize !== undefined) fields.push(v(dataSize));
    const body = Buffer.concat([...fields, ...rest, ...(extra ? [extra] : [])]);
    const withSize = Buffer.concat([v(body.length), body]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32LE(crc32(withSize), 0);
    return Buffer.concat([crc, withSize]);
  };
  const out = [Buffer.from('Rar!\x1a\x07\x01\x00', 'latin1'), header(1, 0, [v(0)])];
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const data = Buffer.from(e.data ?? 'x');
    const fileFields = [v(0), v(data.length), v(0x20), v(0), v(2), v(name.length), name];
    // Extra record: size, type 1 (encryption), version 0, flags 0, then key data we leave zero.
    const encRecord = Buffer.concat([v(1), v(0), v(0), Buffer.alloc(16 + 16)]);
    const extra = e.encrypted ? Buffer.concat([v(encRecord.length), encRecord]) : undefined;
    out.push(header(2, (extra ? 1 : 0) | 2, fileFields, extra, data.length), data);
  }
  out.push(header(5, 0, [v(0)]));
  return Buffer.concat(out);
}

/** 7z with a plain header listing empty files (no packed streams needed), or an AES-encoded header. */
function sevenZip(names: string[], encryptedHeader = false): Buffer {
  let header: Buffer;
  if (encryptedHeader) {
    // kEncodedHeader, kPackInfo(pos 0, 1 stream, kSize 16), kUnPackInfo with one folder whose coder is AES.
    header = Buffer.from([0x17, 0x06, 0x00, 0x01, 0x09, 0x10, 0x00, 0x07, 0x0b, 0x01, 0x00, 0x01, 0x24, 0x06, 0xf1, 0x07, 0x01, 0x01, 0x00, 0x0c, 0x10, 0x00, 0x00]);
  } else {
    const n = names.length;
    const text = Buffer.from(names.map((x) => `${x}\0`).join(''), 'utf16le');
    const emptyBits = Buffer.alloc(Math.ceil(n / 8), 0xff);
    header = Buffer.concat([
      Buffer.from([0x01, 0x05, n]), // kHeader, kFilesInfo, number of files
      Buffer.from([0x0e, emptyBits.length]), emptyBits, // kEmptyStream: every file is empty
      Buffer.from([0x11, text.length + 1, 0x00]), text, // kName: size, external = 0, names
      Buffer.from([0x00, 0x00]), // kEnd of kFilesInfo, kEnd of kHeader
    ]);
  }
  const start = Buffer.alloc(32);
  Buffer.from([0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c, 0x00, 0x04]).copy(start);
  start.writeBigUInt64LE(0n, 12);
  start.writeBigUInt64LE(BigInt(header.length), 20);
  start.writeUInt32LE(crc32(header), 28);
  start.writeUInt32LE(crc32(start.subarray(12, 32)), 8);
  return Buffer.concat([start, header]);
}

function mail(filename: string, type: string, content: Buffer): Buffer {
  const b64 = content.toString('base64').replace(/.{76}/g, '$&\r\n');
  return Buffer.from(
    'From: Alice <alice@example.org>\r\nTo: bob@example.net\r\nSubject: files\r\nDate: Sun, 22 Nov 2026 04:00:00 +0000\r\n' +
      'Message-ID: <arch1@example.org>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b1"\r\n\r\n' +
      '--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nSee the attachment.\r\n' +
      `--b1\r\nContent-Type: ${type}; name="${filename}"\r\nContent-Disposition: attachment; filename="${filename}"\r\n` +
      `Content-Transfer-Encoding: base64\r\n\r\n${b64}\r\n--b1--\r\n`,
  );
}

test('ZIP central directory: names, UTF-8 flag and encryption bit', () => {
  const l = readArchive(zip([{ name: 'docs/report.pdf' }, { name: 'invoice.pdf.exe', encrypted: true }, { name: 'счёт.txt' }]));
  assert.equal(l?.format, 'zip');
  assert.deepEqual(l?.members.map((m) => m.name), ['docs/report.pdf', 'invoice.pdf.exe', 'счёт.txt']);
  assert.deepEqual(l?.members.map((m) => m.encrypted), [false, true, false]);
  assert.equal(l?.encrypted, true);
});

test('RAR 4 and RAR 5 file headers; encrypted main header hides the names', () => {
  const r4 = readArchive(rar4([{ name: 'a.txt' }, { name: 'setup.scr', encrypted: true }]));
  assert.deepEqual(r4?.members, [{ name: 'a.txt', encrypted: false }, { name: 'setup.scr', encrypted: true }]);
  const r4h = readArchive(rar4([{ name: 'hidden.exe' }], true));
  assert.deepEqual(r4h, { format: 'rar', members: [], encrypted: true });
  const r5 = readArchive(rar5([{ name: 'photo.jpg.js' }, { name: 'b.txt', encrypted: true }]));
  assert.deepEqual(r5?.members, [{ name: 'photo.jpg.js', encrypted: false }, { name: 'b.txt', encrypted: true }]);
  assert.equal(r5?.encrypted, true);
});

test('7z: names from a plain header, encryption from an AES-encoded header', () => {
  assert.deepEqual(readArchive(sevenZip(['readme.txt', 'run.bat']))?.members.map((m) => m.name), ['readme.txt', 'run.bat']);
  const enc = readArchive(sevenZip([], true));
  assert.equal(enc?.encrypted, true);
  assert.deepEqual(enc?.members, []);
});

test('truncated and hostile archives end quietly; the member count is capped', () => {
  const z = zip([{ name: 'a.exe' }]);
  for (let cut = 1; cut < z.length; cut += 7) assert.doesNotThrow(() => readArchive(z.subarray(0, cut)));
  const r = rar5([{ name: 'x.txt' }]);
  for (let cut = 1; cut < r.length; cut += 3) assert.doesNotThrow(() => readArchive(r.subarray(0, cut)));
  const many = zip(Array.from({ length: MAX_ARCHIVE_MEMBERS + 5 }, (_, i) => ({ name: `f${i}.txt` })));
  assert.equal(readArchive(many)?.members.length, MAX_ARCHIVE_MEMBERS);
  assert.equal(readArchive(Buffer.from('PK\x03\x04 not really', 'latin1'))?.members.length, 0);
});

test('a ZIP with a cloaked executable and a nested archive fires the member-name symbols', async () => {
  const r = await (await scanner()).scan(mail('docs.zip', 'application/zip', zip([{ name: 'invoice.pdf.exe' }, { name: 'more.rar' }, { name: 'ok.txt' }])), meta());
  assert.deepEqual(symbol(r, 'MIME_DOUBLE_BAD_EXTENSION')?.options, ['.pdf.exe']);
  assert.deepEqual(symbol(r, 'MIME_ARCHIVE_IN_ARCHIVE')?.options, ['docs.zip:more.rar']);
  assert.ok(!names(r).has('MIME_ENCRYPTED_ARCHIVE'));
});

test('encrypted RAR 5, RAR 4 and 7z attachments give MIME_ENCRYPTED_ARCHIVE; bad member names still count', async () => {
  const s = await scanner();
  const r5 = await s.scan(mail('pay.rar', 'application/x-rar', rar5([{ name: 'pay.scr', encrypted: true }])), meta());
  assert.deepEqual(symbol(r5, 'MIME_ENCRYPTED_ARCHIVE')?.options, ['pay.rar']);
  assert.deepEqual(symbol(r5, 'MIME_BAD_EXTENSION')?.options, ['scr']);
  const r4 = await s.scan(mail('x.rar', 'application/x-rar', rar4([{ name: 'y.exe' }], true)), meta());
  assert.ok(names(r4).has('MIME_ENCRYPTED_ARCHIVE'));
  const z7 = await s.scan(mail('x.7z', 'application/x-7z-compressed', sevenZip([], true)), meta());
  assert.ok(names(z7).has('MIME_ENCRYPTED_ARCHIVE'));
  const plain = await s.scan(mail('x.7z', 'application/x-7z-compressed', sevenZip(['notes.txt'])), meta());
  assert.ok(!names(plain).has('MIME_ENCRYPTED_ARCHIVE'));
  assert.ok(!names(plain).has('MIME_BAD_EXTENSION'));
});

const ZIP_TOOL = '/usr/bin/zip';
test('a password-protected archive made by Info-ZIP zip', { skip: existsSync(ZIP_TOOL) ? false : 'Info-ZIP zip is not installed' }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'mailsift-zip-'));
  try {
    writeFileSync(join(dir, 'a.pdf.exe'), 'MZ');
    writeFileSync(join(dir, 'b.txt'), 'text');
    execFileSync(ZIP_TOOL, ['-q', '-P', 'secret', 'enc.zip', 'a.pdf.exe', 'b.txt'], { cwd: dir });
    const l = readArchive(readFileSync(join(dir, 'enc.zip')));
    assert.deepEqual(l, { format: 'zip', members: [{ name: 'a.pdf.exe', encrypted: true }, { name: 'b.txt', encrypted: true }], encrypted: true });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a 7z header of thousands of kName candidates is read in bounded time (it ran for minutes)', () => {
  const size = 400_000;
  const h = Buffer.alloc(size);
  h[0] = 0x01;
  // Every 8 bytes: 0x11, a 5-byte NUMBER giving a length to the header's end, the `external` 0.
  for (let i = 1; i + 8 < size; i += 8) {
    const at = i + 5;
    let len = size - at;
    if ((len - 1) % 2 !== 0) len -= 1;
    h[i] = 0x11;
    h[i + 1] = 0xe0 | ((len >> 24) & 0x0f);
    h.writeUIntLE(len & 0xffffff, i + 2, 3);
    h[at] = 0;
  }
  const sig = Buffer.alloc(32);
  Buffer.from([0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c]).copy(sig);
  sig.writeBigUInt64LE(BigInt(size), 20);
  const cpu = process.cpuUsage();
  const l = readArchive(Buffer.concat([sig, h]));
  const used = process.cpuUsage(cpu);
  assert.equal(l?.format, '7z');
  assert.ok(used.user + used.system < 1_000_000, `${used.user + used.system} µs`);
});

test('a ZIP of 60 000 entries (16-bit counts, no ZIP64): the first MAX_ARCHIVE_MEMBERS are read and the listing says it was cut', () => {
  const many = zip(Array.from({ length: 60_000 }, (_, i) => ({ name: `f${i}.txt` })));
  const l = readArchive(many)!;
  assert.equal(l.members.length, MAX_ARCHIVE_MEMBERS);
  assert.equal(l.truncated, true);
  assert.equal(readArchive(many, 10)!.members.length, 10);
  assert.equal(readArchive(zip([{ name: 'a.txt' }]))!.truncated, undefined);
});

test('archive members past the per-message cap are not checked, and one log line says so', async () => {
  const { createEngine } = await import('../../src/engine/index.js');
  const { builtinModules } = await import('../../src/modules/index.js');
  const { engineConfig } = await import('./helpers.js');
  const { MAX_ARCHIVE_MEMBERS_PER_MESSAGE } = await import('../../src/modules/mime/check-archives.js');
  const lines: Array<{ msg: string; extra?: Record<string, unknown> }> = [];
  const at = (msg: string, extra?: Record<string, unknown>) => void lines.push({ msg, ...(extra ? { extra } : {}) });
  const engine = await createEngine(engineConfig(), builtinModules, { log: { debug: at, info: at, warn: at, error: at } });
  const archives = Math.ceil(MAX_ARCHIVE_MEMBERS_PER_MESSAGE / MAX_ARCHIVE_MEMBERS) + 2;
  // Each archive's members are harmless but the last one of the last archive is an executable.
  const body = zip(Array.from({ length: MAX_ARCHIVE_MEMBERS }, (_, i) => ({ name: `f${i}.txt` })));
  const last = zip([...Array.from({ length: MAX_ARCHIVE_MEMBERS - 1 }, (_, i) => ({ name: `g${i}.txt` })), { name: 'run.exe' }]);
  let s = 'From: a@example.org\r\nTo: b@example.net\r\nSubject: zips\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b1"\r\n\r\n';
  for (let i = 0; i < archives; i++) {
    const z = i === archives - 1 ? last : body;
    s += `--b1\r\nContent-Type: application/zip; name="a${i}.zip"\r\nContent-Disposition: attachment; filename="a${i}.zip"\r\nContent-Transfer-Encoding: base64\r\n\r\n${z.toString('base64')}\r\n`;
  }
  const r = await engine.scan(Buffer.from(`${s}--b1--\r\n`), meta());
  assert.ok(!names(r).has('MIME_BAD_EXTENSION'), 'the last archive lies past the message cap');
  const cut = lines.filter((l) => /archive members past the caps/.test(l.msg));
  assert.equal(cut.length, 1);
  assert.equal(cut[0]!.extra?.['leftForMessage'], 0);
});
