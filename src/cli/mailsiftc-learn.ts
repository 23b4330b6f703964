// mailsiftc learn_spam | learn_ham: feed messages to the controller's /learnspam or /learnham
// (rspamc's commands, same options), from files, directories, Maildir folders and mbox files,
// with a progress bar and a summary of what was learned, skipped as duplicate, refused, or failed.
// A refusal (204: too few tokens, or the learn conditions: the classifier already puts the
// message in that class) is the server declining on purpose, printed with its reason; it does not
// make the command fail. `--bulk` (Learn-Type: bulk) lifts the learn conditions for initial training.
import { request } from 'node:http';
import { Command, InvalidArgumentError } from 'commander';
import cliProgress from 'cli-progress';
import { expandMailInputs, type MailInput } from './mail-inputs.js';

/** rspamc sends learn commands to the controller port. */
const DEFAULT_CONTROLLER = 'localhost:11334';
/** Parallel learns: the controller answers one request per connection, so a few keep it busy. */
const DEFAULT_PARALLEL = 4;
const DEFAULT_TIMEOUT_SEC = 30;

export const LEARN_COMMANDS = new Set(['learn_spam', 'learn_ham']);

interface LearnOptions {
  connect: string;
  password?: string;
  classifier?: string;
  deliver?: string;
  bulk?: boolean;
  timeout: number;
  maxRequests: number;
}

export interface LearnSummary {
  learned: number;
  duplicate: number;
  /** 204: the server declined to learn it, and said why. */
  refused: number;
  failed: number;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

interface Target {
  host?: string;
  port?: number;
  socketPath?: string;
}

function parseTarget(spec: string): Target {
  if (spec.startsWith('/') || spec.startsWith('.')) return { socketPath: spec };
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(spec) ?? /^([^:]+)(?::(\d+))?$/.exec(spec);
  if (!m) throw new Error(`bad controller address: ${spec}`);
  return { host: m[1]!, port: m[2] ? Number(m[2]) : 11334 };
}

function post(target: Target, path: string, body: Buffer, headers: Record<string, string>, timeoutMs: number): Promise<{ status: number; reason: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ ...target, method: 'POST', path, headers: { ...headers, 'Content-Length': String(body.length) }, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, reason: res.statusMessage ?? '' }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no reply within ${timeoutMs / 1000} s`)));
    req.on('error', reject);
    req.end(body);
  });
}

export async function learnMain(argv: string[]): Promise<number> {
  const program = new Command('mailsiftc')
    .description('Learn messages as spam or ham through the controller (/learnspam, /learnham)')
    .helpOption('--help', 'display help')
    .option('-h, --connect <host[:port]>', 'controller address, or a unix socket path', DEFAULT_CONTROLLER)
    .option('-P, --password <password>', 'controller enable password')
    .option('-c, --classifier <name>', 'learn only this classifier')
    .option('-d, --deliver <addr>', 'recipient for per-user statistics (Deliver-To)')
    .option('--bulk', 'initial training: learn even what the classifier already puts in that class (Learn-Type: bulk)')
    .option('-t, --timeout <seconds>', 'time to wait for each reply', positiveInt, DEFAULT_TIMEOUT_SEC)
    .option('-n, --max-requests <n>', 'parallel requests', positiveInt, DEFAULT_PARALLEL)
    .argument('<command>', 'learn_spam or learn_ham')
    .argument('<paths...>', 'message files, directories, Maildir folders or mbox files')
    .exitOverride();
  try {
    program.parse(argv, { from: 'user' });
  } catch (e) {
    return (e as { exitCode?: number }).exitCode ?? 1;
  }
  const o = program.opts<LearnOptions>();
  const [command, ...paths] = program.args as [string, ...string[]];
  if (!LEARN_COMMANDS.has(command)) {
    process.stderr.write(`unknown command ${command}: expected learn_spam or learn_ham\n`);
    return 1;
  }
  let target: Target;
  let inputs: MailInput[];
  try {
    target = parseTarget(o.connect);
    inputs = await expandMailInputs(paths);
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    return 1;
  }
  const path = command === 'learn_spam' ? '/learnspam' : '/learnham';
  const headers: Record<string, string> = { 'User-Agent': 'rspamc', 'Content-Type': 'text/plain' };
  if (o.password !== undefined) headers['Password'] = o.password;
  if (o.classifier !== undefined) headers['Classifier'] = o.classifier;
  if (o.deliver !== undefined) headers['Deliver-To'] = o.deliver;
  if (o.bulk) headers['Learn-Type'] = 'bulk';

  const summary: LearnSummary = { learned: 0, duplicate: 0, refused: 0, failed: 0 };
  const bar = process.stderr.isTTY && inputs.length > 1
    ? new cliProgress.SingleBar({ stream: process.stderr, clearOnComplete: true, format: `${command} {bar} {value}/{total} messages` }, cliProgress.Presets.shades_classic)
    : undefined;
  bar?.start(inputs.length, 0);
  const note = (line: string): void => {
    // Keep the bar intact: log above it.
    if (bar) bar.stop();
    process.stderr.write(`${line}\n`);
    if (bar) bar.start(inputs.length, summary.learned + summary.duplicate + summary.refused + summary.failed);
  };
  let cursor = 0;
  const worker = async (): Promise<void> => {
    while (cursor < inputs.length) {
      const input = inputs[cursor++]!;
      try {
        const body = await input.read();
        const r = await post(target, path, body, { ...headers, Filename: input.name }, o.timeout * 1000);
        if (r.status === 200) summary.learned++;
        else if (r.status === 208) summary.duplicate++;
        else if (r.status === 204) {
          summary.refused++;
          note(`${input.name}: not learned: ${r.reason}`);
        } else {
          summary.failed++;
          note(`${input.name}: ${r.status} ${r.reason}`);
        }
      } catch (e) {
        summary.failed++;
        note(`${input.name}: ${(e as Error).message}`);
      }
      bar?.increment();
    }
  };
  await Promise.all(Array.from({ length: Math.min(o.maxRequests, Math.max(1, inputs.length)) }, worker));
  bar?.stop();
  process.stdout.write(`learned: ${summary.learned}, skipped as duplicate: ${summary.duplicate}, refused: ${summary.refused}, failed: ${summary.failed}\n`);
  return summary.failed > 0 ? 1 : 0;
}
