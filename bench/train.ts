// The benchmarks' trained mode (--trained): Bayes is trained on the development split through a
// running server's controller, /learnspam and /learnham, as `rspamc learn_spam|learn_ham` sends
// them, before anything is measured. mailsift's Bayes lives in its embedded SQLite store (the
// default) or, with `--store redis`, in the Redis at 127.0.0.1:6379 under a key prefix of this
// run's own, removed when the run ends; the reference Rspamd's lives in its private redis.
import net from 'node:net';
import { Redis } from 'ioredis';
import { shuffled, type CorpusMessage } from './corpus.js';
import { waitForPing, type BenchConf } from './servers.js';

export type BayesStore = 'sqlite' | 'redis';
export const BAYES_STORES: readonly BayesStore[] = ['sqlite', 'redis'];

/** The shared Redis mailsift's Bayes uses with `--store redis`. */
const BENCH_REDIS = '127.0.0.1:6379';
/** Concurrent learn requests: learning writes, so a few in flight keep the store busy without a pile-up. */
const TRAIN_CONCURRENCY = 4;
/** Training order: ham and spam interleaved (one fixed shuffle), so balance guards see both classes grow. */
const TRAIN_SEED = 0x7ea1;
/** Per-learn time-out. */
const LEARN_TIMEOUT_MS = 30_000;
/** Keys deleted per DEL when the run's Redis keys are removed. */
const DEL_BATCH = 500;

export interface TrainTally {
  /** Per class: learned, and refusals by status and reason (`208 already learned`, …). */
  spam: Record<string, number>;
  ham: Record<string, number>;
  ms: number;
}

function classOf(m: CorpusMessage): 'spam' | 'ham' {
  return m.group.startsWith('spam') ? 'spam' : 'ham';
}

/** One learn request exactly as sent; `bulk`: `Learn-Type: bulk` (mailsift's opt-out of the learn guards for initial training). */
function learnRequest(controller: string, cls: 'spam' | 'ham', message: Buffer, bulk: boolean): Buffer {
  const head = `POST /learn${cls} HTTP/1.1\r\nHost: ${controller}\r\nConnection: close\r\n${bulk ? 'Learn-Type: bulk\r\n' : ''}Content-Length: ${message.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), message]);
}

/** Sends one request on its own connection; resolves with the status, its reason phrase and the body's first bytes. */
function exchange(address: string, wire: Buffer): Promise<{ status: number; reason: string; body: string }> {
  const i = address.lastIndexOf(':');
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host: address.slice(0, i), port: Number(address.slice(i + 1)) });
    const chunks: Buffer[] = [];
    const t = setTimeout(() => { sock.destroy(); reject(new Error(`no reply within ${LEARN_TIMEOUT_MS} ms`)); }, LEARN_TIMEOUT_MS);
    sock.on('data', (d: Buffer) => chunks.push(d));
    sock.on('error', (e) => { clearTimeout(t); reject(e); });
    sock.on('close', () => {
      clearTimeout(t);
      const text = Buffer.concat(chunks).toString('latin1');
      const line = /^HTTP\/1\.[01] (\d{3}) ?([^\r\n]*)/.exec(text);
      const body = text.indexOf('\r\n\r\n') + 4;
      resolve({ status: Number(line?.[1] ?? 0), reason: line?.[2] ?? '', body: text.slice(body, body + 300) });
    });
    sock.end(wire);
  });
}

/**
 * A refusal's short name: the status and the reason's first words, from the body's error or, for
 * a reply without a body (a 204 has none), the status line's reason phrase.
 */
function refusal(r: { status: number; reason: string; body: string }): string {
  const text = /"error"\s*:\s*"([^"]*)/.exec(r.body)?.[1] ?? r.reason;
  // Message ids and numbers out before the cut, so refusals of one kind count together.
  const kind = text.replace(/<[^<>\s]+>?/g, '<id>').replace(/\d+(\.\d+)?/g, 'N').slice(0, 80);
  return kind ? `${r.status} ${kind}` : String(r.status);
}

/** Trains the classifier behind `controller` on `messages` (spam folders as spam, the rest ham). */
export async function trainThroughController(controller: string, messages: CorpusMessage[], bulk: boolean): Promise<TrainTally> {
  // The scan port answering does not mean the controller does: a server's controller process may
  // still be starting, and learns sent before it listens fail (a run once learned nothing and
  // measured an untrained server as the trained one).
  await waitForPing(controller, undefined, () => `the controller on ${controller} did not answer /ping`);
  const tally: TrainTally = { spam: {}, ham: {}, ms: 0 };
  const order = shuffled(messages, TRAIN_SEED);
  const t0 = performance.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < order.length) {
      const m = order[next++]!;
      const cls = classOf(m);
      let key: string;
      try {
        const r = await exchange(controller, learnRequest(controller, cls, m.bytes, bulk));
        key = r.status === 200 ? 'learned' : refusal(r);
      } catch (e) {
        key = `failed: ${(e as Error).message}`;
      }
      tally[cls][key] = (tally[cls][key] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: TRAIN_CONCURRENCY }, worker));
  tally.ms = performance.now() - t0;
  const failed = [...Object.entries(tally.spam), ...Object.entries(tally.ham)].filter(([k]) => k.startsWith('failed'));
  // A training with lost learns measures another classifier than the one named: no figures.
  if (failed.length > 0) throw new Error(`training through ${controller} lost learns (${failed.map(([k, n]) => `${k} ${n}`).join(', ')}): ${tallyText(tally)}`);
  return tally;
}

export function tallyText(t: TrainTally): string {
  const one = (r: Record<string, number>): string => Object.entries(r).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(', ');
  return `spam: ${one(t.spam)}; ham: ${one(t.ham)}; ${(t.ms / 1000).toFixed(0)} s`;
}

/** Where a trained mailsift keeps its Bayes: the conf patch, and the clean-up once the server has stopped. */
export interface BayesPlacement {
  patch(conf: BenchConf): void;
  cleanUp(): Promise<void>;
  describe: string;
}

export function bayesPlacement(store: BayesStore): BayesPlacement {
  if (store === 'sqlite') return { patch: () => undefined, cleanUp: async () => undefined, describe: 'SQLite (embedded, in the run\'s own data_dir)' };
  // A prefix of this run's own: the shared Redis may hold other installations' and tests' keys.
  const prefix = `mailsift-bench-${process.pid}-${Date.now()}:`;
  return {
    describe: `Redis ${BENCH_REDIS}, key prefix ${prefix}`,
    patch(conf: BenchConf): void {
      const stores = (conf.stores as Record<string, unknown> | undefined) ?? {};
      conf.stores = { ...stores, bayes: { backend: 'redis', redis: { servers: BENCH_REDIS, prefix } } };
    },
    async cleanUp(): Promise<void> {
      const [host, port] = BENCH_REDIS.split(':');
      const client = new Redis({ host: host!, port: Number(port), lazyConnect: true, maxRetriesPerRequest: 1 });
      try {
        await client.connect();
        let cursor = '0';
        do {
          const [nextCursor, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
          cursor = nextCursor;
          for (let i = 0; i < keys.length; i += DEL_BATCH) await client.del(...keys.slice(i, i + DEL_BATCH));
        } while (cursor !== '0');
      } finally {
        client.disconnect();
      }
    },
  };
}
