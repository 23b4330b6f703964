// Child of zstd-bounded.test.ts: decodes the body of a recorded request once, in a fresh
// process, and reports the growth of its peak RSS (VmHWM) over the decode.
import { readFileSync } from 'node:fs';
import { zstdDecompressBounded } from '../../src/http/zstd.js';

const hwmKiB = (): number => Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'latin1'))?.[1]);
const [file, limit] = process.argv.slice(2) as [string, string];
const raw = readFileSync(file);
const body = raw.subarray(raw.indexOf('\r\n\r\n') + 4);
const before = hwmKiB();
const out = zstdDecompressBounded(body, Number(limit));
const peakKiB = hwmKiB() - before;
let allA = true;
for (let i = 0; i < out.length && allA; i += 4096) allA = out[i] === 0x41;
process.send!({ bytes: out.length, allA, peakKiB });
