// One run of the accuracy bench against a real server: `mailsift serve` on a private copy of
// conf/ with fresh stores, or the reference Rspamd 3.4 with its Bayes emptied, trained through the
// controller's /learnspam and /learnham exactly as `rspamc learn_spam` sends them (learn
// conditions and all), then scanned through /checkv2.
import http from 'node:http';
import net from 'node:net';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ScanClient } from '../src/client/index.js';
import type { CorpusMessage } from './corpus.js';
import { addHeaderThreshold, KNOWN_REFUSAL, parseLearnReply, refusalKind, scanOutcomeOf, type ScanOutcome } from './accuracy-reply.js';
import { flushReferenceBayes, startMailsift, startReferenceRspamd, stopOnSignal, waitForPing, type RunningServer } from './servers.js';

export type { ScanOutcome } from './accuracy-reply.js';

/** Scans in flight at once: enough to keep one scan worker busy, few enough to keep roughly the time order. */
const SCAN_CONCURRENCY = 4;
/** A learn or a scan that takes longer than this is a failure of the run, not a slow message. */
const REQUEST_TIMEOUT_MS = 60_000;
/**
 * The scan worker remembers "too few learns" for a second (src/modules/bayes/check.ts); waiting
 * this long after the last learn makes every evaluation scan see the trained store.
 */
const AFTER_TRAINING_MS = 1_500;

export interface LearnTally {
  /** Per class: learned, and refused by reason (the reply's status and the start of its text). */
  spam: Record<string, number>;
  ham: Record<string, number>;
  ms: number;
}

/**
 * A mailsift server with its stores in its own temporary directory (every run starts untrained)
 * and one scan worker; `bayesYaml` becomes its local.d/bayes.yaml.
 */
export async function startBenchServer(repoRoot: string, bayesYaml?: string): Promise<RunningServer> {
  const server = await startMailsift(repoRoot, 1, {
    patchConf: async (conf, confDir) => {
      conf['data_dir'] = join(confDir, 'data');
      conf['logging'] = { level: 'error', format: 'json' };
      if (bayesYaml) {
        await mkdir(join(confDir, 'local.d'), { recursive: true });
        await writeFile(join(confDir, 'local.d', 'bayes.yaml'), bayesYaml);
      }
    },
  });
  // startMailsift waits for the scan port; the controller is another process and may come later.
  try {
    await waitForPing(server.controller!, undefined, () => 'the controller did not answer /ping');
  } catch (e) {
    await server.stop();
    throw e;
  }
  return server;
}

/**
 * The reference Rspamd's normal workers: one, as the mailsift bench server has one scan worker;
 * the verdicts do not depend on it and the machine's two cores are shared.
 */
const RSPAMD_WORKERS = 1;

/** A filter the bench measures. */
export interface FilterUnderTest {
  name: 'mailsift' | 'rspamd';
  /** A running server whose Bayes has learned nothing yet; `done()` once the experiment is over. */
  untrained(): Promise<{ server: RunningServer; done(): Promise<void> }>;
  /** The score from which the server adds the spam header. */
  addHeader(server: RunningServer): Promise<number>;
  /** Stops whatever is still running. */
  close(): Promise<void>;
}

/** mailsift: a new server with fresh stores for every experiment; `addHeader` as its conf/ says. */
export function mailsiftFilter(repoRoot: string, addHeader: number, bayesYaml?: string): FilterUnderTest {
  return {
    name: 'mailsift',
    async untrained() {
      const server = await startBenchServer(repoRoot, bayesYaml);
      const forget = stopOnSignal(server.stop);
      return { server, done: () => { forget(); return server.stop(); } };
    },
    addHeader: async () => addHeader,
    close: async () => undefined,
  };
}

/**
 * The reference Rspamd 3.4 (bench/servers.ts): started once, its Bayes (and its learn cache, which
 * lives in the same redis) emptied with `rspamd.sh flush-bayes` before every experiment; its
 * threshold read from the controller's /actions, since a reply's `required_score` is the reject one.
 */
export function rspamdFilter(): FilterUnderTest {
  let running: RunningServer | undefined;
  return {
    name: 'rspamd',
    async untrained() {
      if (!running) {
        running = await startReferenceRspamd(RSPAMD_WORKERS);
        stopOnSignal(running.stop);
      }
      await flushReferenceBayes();
      return { server: running, done: async () => undefined };
    },
    addHeader: async (server) => addHeaderThreshold(await getJson(server.controller!, '/actions')),
    async close() {
      const r = running;
      running = undefined;
      await r?.stop();
    },
  };
}

/** GET a controller endpoint's JSON. */
function getJson(controller: string, path: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = http.get({ ...hostPort(controller), path, timeout: REQUEST_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        try {
          if (res.statusCode !== 200) throw new Error(`${path}: HTTP ${res.statusCode}`);
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch (e) {
          reject(e as Error);
        }
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${path}: no reply within ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
  });
}

function hostPort(spec: string): { host: string; port: number } {
  const i = spec.lastIndexOf(':');
  return { host: spec.slice(0, i), port: Number(spec.slice(i + 1)) };
}

/** A learn reply longer than this is not a controller's answer: the run fails instead of buffering it. */
const MAX_LEARN_REPLY_BYTES = 64 * 1024;

/**
 * POST one message to the controller as rspamc does, on a connection of its own, and read the
 * reply by hand: Rspamd 3.4 answers a learn refused by its learn conditions with status 204 *and*
 * a JSON body, which node's HTTP client rejects (a 204 has no body) as a parse error.
 */
function postLearn(controller: string, path: string, body: Buffer, bulk: boolean): Promise<{ status: number; text: string }> {
  const head = `POST ${path} HTTP/1.1\r\nHost: ${controller}\r\nUser-Agent: rspamc\r\nConnection: close\r\n${bulk ? 'Learn-Type: bulk\r\n' : ''}Content-Length: ${body.length}\r\n\r\n`;
  return new Promise((resolve, reject) => {
    const sock = net.connect(hostPort(controller));
    const chunks: Buffer[] = [];
    let size = 0;
    sock.setTimeout(REQUEST_TIMEOUT_MS, () => sock.destroy(new Error(`no learn reply within ${REQUEST_TIMEOUT_MS} ms`)));
    sock.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_LEARN_REPLY_BYTES) sock.destroy(new Error(`learn reply over ${MAX_LEARN_REPLY_BYTES} bytes`));
      else chunks.push(c);
    });
    sock.on('error', reject);
    sock.on('close', (hadError) => {
      if (hadError) return;
      try {
        resolve(parseLearnReply(Buffer.concat(chunks)));
      } catch (e) {
        reject(e as Error);
      }
    });
    sock.end(Buffer.concat([Buffer.from(head, 'latin1'), body]));
  });
}

/** Learn `train` one message at a time, in order, through the controller. */
export async function trainThroughController(server: RunningServer, train: readonly CorpusMessage[], bulk: boolean): Promise<LearnTally> {
  const tally: LearnTally = { spam: {}, ham: {}, ms: 0 };
  const t0 = performance.now();
  for (const m of train) {
    const cls = m.group === 'spam-1' ? 'spam' : 'ham';
    const r = await postLearn(server.controller!, cls === 'spam' ? '/learnspam' : '/learnham', m.bytes, bulk);
    const kind = r.status === 200 ? 'learned' : refusalKind(r.status, r.text);
    // A 404 is a wrong path unless its text names a refusal (an older Rspamd answers "already learned" with 404).
    if (r.status >= 500 || (r.status === 404 && !KNOWN_REFUSAL.test(kind))) throw new Error(`${m.name}: learn failed: ${r.status} ${r.text}`);
    tally[cls][kind] = (tally[cls][kind] ?? 0) + 1;
  }
  tally.ms = performance.now() - t0;
  await new Promise((r) => setTimeout(r, AFTER_TRAINING_MS));
  return tally;
}

/** Scan every message through /checkv2 with no envelope (the corpus has none an MTA would pass). */
export async function scanAll(server: RunningServer, msgs: readonly CorpusMessage[]): Promise<ScanOutcome[]> {
  const client = new ScanClient({ server: server.scan, timeoutMs: REQUEST_TIMEOUT_MS, userAgent: 'rspamc' });
  const out = new Array<ScanOutcome>(msgs.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < msgs.length) {
      const i = next++;
      const m = msgs[i]!;
      const r = await client.scan(m.bytes, { bodyBlock: false });
      out[i] = scanOutcomeOf(m, r.result);
    }
  };
  try {
    await Promise.all(Array.from({ length: SCAN_CONCURRENCY }, worker));
  } finally {
    client.close();
  }
  return out;
}
