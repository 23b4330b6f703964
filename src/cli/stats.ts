// `mailsift stats export|import`: back up and move learned statistics (Bayes token counts and
// learn totals, fuzzy hashes) as JSON lines, between the SQLite and Redis back ends. Export
// reads the stores the configuration names (or `--backend`); import adds to them.
//
// Lines, in this order: {"type":"bayes","classifier","user","learns_spam","learns_ham"} followed
// by that scope's {"type":"token","token":"<u64 decimal>","spam","ham"} lines; then
// {"type":"fuzzy","digest","shingles":["<u64>"…]?,"flag","value","updated"} lines.
// The Bayes learn cache is not part of the interchange: after an import, a message learned
// before can be learned once more.
import { createReadStream, createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { Command } from 'commander';
import type { BayesScope, FuzzyRecord, Stores } from '../storage/types.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };

export interface ExportCounts {
  scopes: number;
  tokens: number;
  fuzzy: number;
}

async function write(out: Writable, line: string): Promise<void> {
  if (!out.write(`${line}\n`)) await once(out, 'drain');
}

export async function exportStats(stores: Stores, out: Writable): Promise<ExportCounts> {
  const counts: ExportCounts = { scopes: 0, tokens: 0, fuzzy: 0 };
  for (const scope of await stores.bayes.scopes()) {
    const t = await stores.bayes.totals(scope);
    await write(out, JSON.stringify({ type: 'bayes', classifier: scope.classifier, user: scope.user, learns_spam: t.learnsSpam, learns_ham: t.learnsHam }));
    counts.scopes++;
    for await (const row of stores.bayes.exportTokens(scope)) {
      await write(out, JSON.stringify({ type: 'token', token: row.token.toString(), spam: row.spam, ham: row.ham }));
      counts.tokens++;
    }
  }
  for await (const rec of stores.fuzzy.exportAll()) {
    const line: Record<string, unknown> = { type: 'fuzzy', digest: rec.digest, flag: rec.flag, value: rec.value, updated: rec.updated };
    if (rec.shingles) line['shingles'] = rec.shingles.map(String);
    await write(out, JSON.stringify(line));
    counts.fuzzy++;
  }
  return counts;
}

type Line = Record<string, unknown> & { type?: unknown };

/** A pull-based reader of parsed lines with one line of look-ahead. */
class LineReader {
  readonly #it: AsyncIterator<string>;
  #peeked: Line | undefined;
  #lineNo = 0;
  constructor(lines: AsyncIterable<string>) {
    this.#it = lines[Symbol.asyncIterator]();
  }
  get lineNo(): number {
    return this.#lineNo;
  }
  async peek(): Promise<Line | undefined> {
    while (this.#peeked === undefined) {
      const r = await this.#it.next();
      if (r.done) return undefined;
      this.#lineNo++;
      if (r.value.trim() === '') continue;
      try {
        this.#peeked = JSON.parse(r.value) as Line;
      } catch {
        throw new Error(`line ${this.#lineNo}: not JSON`);
      }
    }
    return this.#peeked;
  }
  async next(): Promise<Line | undefined> {
    const l = await this.peek();
    this.#peeked = undefined;
    return l;
  }
}

const num = (v: unknown, what: string, line: number): number => {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new Error(`line ${line}: ${what} must be a non-negative number`);
  return v;
};

export async function importStats(stores: Stores, lines: AsyncIterable<string>): Promise<ExportCounts> {
  const counts: ExportCounts = { scopes: 0, tokens: 0, fuzzy: 0 };
  const r = new LineReader(lines);
  for (let head = await r.next(); head !== undefined; head = await r.next()) {
    if (head.type === 'bayes') {
      const scope: BayesScope = { classifier: String(head['classifier'] ?? 'bayes'), user: String(head['user'] ?? '') };
      const totals = { learnsSpam: num(head['learns_spam'], 'learns_spam', r.lineNo), learnsHam: num(head['learns_ham'], 'learns_ham', r.lineNo) };
      async function* rows() {
        for (let l = await r.peek(); l?.type === 'token'; l = await r.peek()) {
          await r.next();
          counts.tokens++;
          yield { token: BigInt(String(l['token'])), spam: num(l['spam'], 'spam', r.lineNo), ham: num(l['ham'], 'ham', r.lineNo) };
        }
      }
      await stores.bayes.importTokens(scope, rows(), totals);
      counts.scopes++;
    } else if (head.type === 'fuzzy') {
      const first = head;
      async function* recs(): AsyncIterable<FuzzyRecord> {
        for (let l: Line | undefined = first; l?.type === 'fuzzy'; l = await r.peek()) {
          if (l !== first) await r.next();
          counts.fuzzy++;
          const rec: FuzzyRecord = { digest: String(l['digest']), flag: num(l['flag'], 'flag', r.lineNo), value: Number(l['value'] ?? 0), updated: num(l['updated'], 'updated', r.lineNo) };
          if (Array.isArray(l['shingles'])) rec.shingles = (l['shingles'] as unknown[]).map((s) => BigInt(String(s)));
          yield rec;
        }
      }
      await stores.fuzzy.importAll(recs());
    } else {
      throw new Error(`line ${r.lineNo}: unexpected line type ${JSON.stringify(head.type)}`);
    }
  }
  return counts;
}

interface StatsCliOptions {
  config: string;
  backend?: 'sqlite' | 'redis';
  output?: string;
  input?: string;
}

async function storesFor(opts: StatsCliOptions): Promise<Stores> {
  // Loaded on use: this file is imported by every `mailsift` command, the server's included.
  const { loadConfig } = await import('../config/load.js');
  const { openStores } = await import('../storage/index.js');
  const cfg = await loadConfig(opts.config);
  const stores = opts.backend
    ? { ...cfg.stores, backend: opts.backend, bayes: { ...cfg.stores.bayes, backend: opts.backend }, fuzzy: { ...cfg.stores.fuzzy, backend: opts.backend } }
    : cfg.stores;
  return openStores({ dataDir: cfg.dataDir, stores }, silent);
}

export function registerStatsCommand(program: Command, defaultConfDir: () => string): void {
  const stats = program.command('stats').description('export or import learned statistics (Bayes and fuzzy) as JSON lines');
  const backendOpt = ['--backend <name>', 'read/write this back end (sqlite or redis) instead of the configured one'] as const;
  const run = async (fn: () => Promise<ExportCounts>, verb: string): Promise<void> => {
    try {
      const c = await fn();
      process.stderr.write(`${verb} ${c.scopes} Bayes statfile scopes, ${c.tokens} tokens, ${c.fuzzy} fuzzy hashes\n`);
      process.exit(0);
    } catch (err) {
      process.stderr.write(`${(err as Error).message}\n`);
      process.exit(1);
    }
  };
  stats
    .command('export')
    .description('write every statistic to a file (or standard output)')
    .option('-c, --config <dir>', 'configuration directory', defaultConfDir())
    .option(...backendOpt)
    .option('-o, --output <file>', 'output file (default: standard output)')
    .action((opts: StatsCliOptions) =>
      run(async () => {
        const stores = await storesFor(opts);
        const out = opts.output ? createWriteStream(opts.output) : process.stdout;
        try {
          const c = await exportStats(stores, out);
          if (opts.output) {
            out.end();
            await once(out, 'finish');
          }
          return c;
        } finally {
          await stores.close();
        }
      }, 'exported'),
    );
  stats
    .command('import')
    .description('add statistics from a file (or standard input) to the stores')
    .option('-c, --config <dir>', 'configuration directory', defaultConfDir())
    .option(...backendOpt)
    .option('-i, --input <file>', 'input file (default: standard input)')
    .action((opts: StatsCliOptions) =>
      run(async () => {
        const stores = await storesFor(opts);
        try {
          const input = opts.input ? createReadStream(opts.input) : process.stdin;
          return await importStats(stores, createInterface({ input, crlfDelay: Infinity }));
        } finally {
          await stores.close();
        }
      }, 'imported'),
    );
}
