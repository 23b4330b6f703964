// Parse throughput of parseMessage on the SpamAssassin corpus development split
// (easy-ham-1, hard-ham-1, spam-1). Prints messages/s and µs per message.
// Run: npx tsx bench/message/parse.bench.ts [rounds]
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseMessage } from '../../src/message/parse-message.js';

const DATA = join('node_modules', '@stdlib', 'datasets-spam-assassin', 'data');
const SPLITS = ['easy-ham-1', 'hard-ham-1', 'spam-1'];

function loadCorpus(): Buffer[] {
  const out: Buffer[] = [];
  for (const split of SPLITS) {
    const dir = join(DATA, split);
    for (const name of readdirSync(dir).sort()) {
      if (name.endsWith('.json')) continue;
      out.push(readFileSync(join(dir, name)));
    }
  }
  return out;
}

interface Round {
  /** Wall-clock nanoseconds. */
  ns: number;
  /** CPU microseconds of this process (user + system): stabler than wall time on a shared machine. */
  cpuUs: number;
}

function round(messages: Buffer[]): Round {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  let sink = 0;
  for (const m of messages) sink += parseMessage(m).parts.length;
  const ns = Number(process.hrtime.bigint() - t0);
  const c = process.cpuUsage(c0);
  if (sink === 0) throw new Error('parsed nothing');
  return { ns, cpuUs: c.user + c.system };
}

const rounds = Number(process.argv[2] ?? 5);
const messages = loadCorpus();
const bytes = messages.reduce((n, m) => n + m.length, 0);
console.log(`corpus: ${messages.length} messages, ${(bytes / 1048576).toFixed(1)} MiB`);
round(messages); // warm-up: JIT and lazy module state
let best: Round = { ns: Infinity, cpuUs: Infinity };
for (let r = 0; r < rounds; r++) {
  const res = round(messages);
  if (res.ns < best.ns) best = res;
  console.log(`round ${r + 1}: ${((messages.length * 1e9) / res.ns).toFixed(0)} messages/s, ${(res.cpuUs / messages.length).toFixed(1)} µs CPU/message`);
}
console.log(
  `best: ${((messages.length * 1e9) / best.ns).toFixed(0)} messages/s, ${(best.ns / messages.length / 1000).toFixed(1)} µs/message wall, ` +
    `${(best.cpuUs / messages.length).toFixed(1)} µs CPU/message, ${((bytes * 1e9) / best.ns / 1048576).toFixed(1)} MiB/s`,
);
