// mailsiftc: scan messages against a mailsift (or Rspamd) scan worker, with rspamc's options
// and rspamc's output, so existing habits and scripts carry over.
import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import cliProgress from 'cli-progress';
import { learnMain, LEARN_COMMANDS } from './mailsiftc-learn.js';
import { ScanClient, isScanClientError, renderMimeOutput, renderScanText, type ScanOptions, type ScanReply } from '../client/index.js';

/** rspamc's default `-n`: enough parallel scans to keep a worker busy without flooding it. */
const DEFAULT_PARALLEL = 8;
/** rspamc's default `-t`, seconds. */
const DEFAULT_TIMEOUT_SEC = 10;
/** rspamc treats a first argument with one of these names as the command, not a file. */
const SCAN_COMMANDS = new Set(['symbols', 'check', 'report']);

interface CliOptions {
  connect: string;
  password?: string;
  protocolV3?: boolean;
  msgpack?: boolean;
  compressed?: boolean;
  json?: boolean;
  ip?: string;
  from?: string;
  rcpt: string[];
  helo?: string;
  hostname?: string;
  user?: string;
  deliver?: string;
  queueId?: string;
  settings?: string;
  settingsId?: string;
  header: string[];
  timeout: number;
  maxRequests: number;
  mime?: boolean;
  passAll?: boolean;
  raw?: boolean;
  extendedUrls?: boolean;
  profile?: boolean;
  /** Server public key: HTTP-encrypt every request (rspamc --key). */
  key?: string;
}

interface Input {
  name: string;
  read: () => Promise<Buffer>;
}

const collect = (value: string, prev: string[]): string[] => [...prev, value];

function positiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('expected a positive number');
  return n;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

/** `Name: value` or `Name=value` (rspamc accepts both); a bare name sends an empty value. */
export function parseHeaderArg(arg: string): [string, string] {
  const at = arg.search(/[:=]/);
  if (at < 0) return [arg.trim(), ''];
  return [arg.slice(0, at).trim(), arg.slice(at + 1).trim()];
}

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Files in argument order; directories expanded recursively (sorted, dot entries skipped like rspamc). */
async function expandInputs(paths: string[]): Promise<Input[]> {
  if (paths.length === 0) return [{ name: 'stdin', read: readStdin }];
  const out: Input[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (e.name.startsWith('.')) continue;
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) out.push({ name: p, read: () => readFile(p) });
    }
  };
  for (const p of paths) {
    if (p === '-') {
      out.push({ name: 'stdin', read: readStdin });
      continue;
    }
    const st = await stat(p).catch((e: NodeJS.ErrnoException) => {
      throw new Error(`cannot open ${p}: ${e.code ?? e.message}`);
    });
    if (st.isDirectory()) await walk(p);
    else out.push({ name: p, read: () => readFile(p) });
  }
  return out;
}

function scanOptions(o: CliOptions, filename: string): ScanOptions {
  const s: ScanOptions = { filename, bodyBlock: true, rcpt: o.rcpt, headers: o.header.map(parseHeaderArg) };
  if (o.ip !== undefined) s.ip = o.ip;
  if (o.from !== undefined) s.from = o.from;
  if (o.helo !== undefined) s.helo = o.helo;
  if (o.hostname !== undefined) s.hostname = o.hostname;
  if (o.user !== undefined) s.user = o.user;
  if (o.deliver !== undefined) s.deliverTo = o.deliver;
  if (o.queueId !== undefined) s.queueId = o.queueId;
  if (o.settings !== undefined) s.settings = o.settings;
  if (o.settingsId !== undefined) s.settingsId = o.settingsId;
  if (o.password !== undefined) s.password = o.password;
  if (o.passAll) s.passAll = true;
  if (o.raw) s.raw = true;
  if (o.extendedUrls) s.extendedUrls = true;
  if (o.profile) s.profile = true;
  if (o.compressed) s.compress = true;
  if (o.msgpack) s.msgpack = true;
  s.protocol = o.protocolV3 ? 'v3' : 'v2';
  return s;
}

type Outcome = { ok: true; input: Buffer; reply: ScanReply } | { ok: false; input: Buffer | undefined; error: string; connection: boolean };

function render(o: CliOptions, name: string, outcome: Outcome, tty: boolean): Buffer {
  if (o.mime) {
    if (outcome.input === undefined) return Buffer.from(`${name}: ${outcome.ok ? '' : outcome.error}\n`);
    const elapsed = outcome.ok ? outcome.reply.elapsedMs / 1000 : 0;
    return renderMimeOutput(outcome.input, outcome.ok ? outcome.reply : undefined, elapsed, outcome.ok ? undefined : outcome.error);
  }
  if (!outcome.ok) {
    // rspamc prints the failure where the verdict would have been.
    return Buffer.from(o.json ? `${outcome.error}\n\n` : `Results for file: ${name} (0.000 seconds)\n${outcome.error}\n\n`);
  }
  if (o.json) {
    const { reply } = outcome;
    const text = reply.resultFormat === 'json' ? reply.resultBytes.toString('utf8') : JSON.stringify(reply.result);
    return Buffer.from(text + '\n');
  }
  return Buffer.from(renderScanText(name, outcome.reply, { elapsedSec: outcome.reply.elapsedMs / 1000, tty }));
}

export async function main(argv: string[]): Promise<number> {
  if (argv.some((a) => LEARN_COMMANDS.has(a))) return learnMain(argv);
  const program = new Command('mailsiftc')
    .description('Scan messages with a mailsift (or Rspamd) scan worker; rspamc-compatible options and output')
    .helpOption('--help', 'display help')
    .option('-h, --connect <host[:port]>', 'scan worker address, or a unix socket path', 'localhost:11333')
    .option('-P, --password <password>', 'controller password (sent as Password)')
    .option('--key <pubkey>', "encrypt requests to the server's public key (base32, as rspamc --key)")
    .option('-3, --protocol-v3', 'use /checkv3 (multipart) instead of /checkv2')
    .option('--msgpack', 'msgpack metadata and result (v3) / Accept msgpack (v2)')
    .option('-z, --compressed', 'zstd-compress the message and ask for a compressed reply')
    .option('-j, --json', 'print the JSON result as the server sent it')
    .option('-i, --ip <ip>', 'SMTP client IP')
    .option('-F, --from <addr>', 'SMTP MAIL FROM')
    .option('-r, --rcpt <addr>', 'SMTP RCPT TO (repeatable)', collect, [])
    .option('--helo <helo>', 'SMTP HELO')
    .option('--hostname <name>', 'resolved client host name')
    .option('-u, --user <user>', 'authenticated SMTP user')
    .option('-d, --deliver <addr>', 'delivery recipient (Deliver-To)')
    .option('-q, --queue-id <id>', 'MTA queue id')
    .option('--settings <json>', 'per-request settings (JSON or UCL)')
    .option('--settings-id <id>', 'configured settings id')
    .option('--header <header>', "extra request header 'Name: value' (repeatable)", collect, [])
    .option('-t, --timeout <seconds>', 'time to wait for each reply', positiveNumber, DEFAULT_TIMEOUT_SEC)
    .option('-n, --max-requests <n>', 'parallel requests', positiveInt, DEFAULT_PARALLEL)
    .option('-m, --mime', 'print the message with the verdict headers added (the rewritten one if the server changed it)')
    .option('-p, --pass-all', 'run every rule even after the reject threshold')
    .option('--raw', 'input is not a MIME message')
    .option('--extended-urls', 'extended URL objects in the result')
    .option('--profile', 'per-symbol timings')
    .argument('[files...]', 'files or directories to scan (stdin when none)')
    .exitOverride();
  try {
    program.parse(argv, { from: 'user' });
  } catch (e) {
    const code = (e as { exitCode?: number }).exitCode;
    return code ?? 1;
  }
  const o = program.opts<CliOptions>();
  let paths = program.args;
  if (paths.length && SCAN_COMMANDS.has(paths[0]!.toLowerCase()) && !(await stat(paths[0]!).catch(() => undefined))) paths = paths.slice(1);

  let inputs: Input[];
  try {
    inputs = await expandInputs(paths);
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    return 1;
  }
  let client: ScanClient;
  try {
    client = new ScanClient({ server: o.connect, timeoutMs: o.timeout * 1000, maxSockets: o.maxRequests, userAgent: 'rspamc', ...(o.key !== undefined ? { key: o.key } : {}) });
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    return 1;
  }
  const tty = Boolean(process.stdout.isTTY);
  const bar = process.stderr.isTTY && inputs.length > 1
    ? new cliProgress.SingleBar({ stream: process.stderr, clearOnComplete: true, format: 'scanning {bar} {value}/{total} files' }, cliProgress.Presets.shades_classic)
    : undefined;
  bar?.start(inputs.length, 0);

  // Results print in input order whatever order replies arrive in, so output is reproducible.
  const done: Array<Buffer | undefined> = new Array(inputs.length);
  let nextToPrint = 0;
  let failures = 0;
  const flush = (): void => {
    while (nextToPrint < inputs.length && done[nextToPrint] !== undefined) {
      process.stdout.write(done[nextToPrint]!);
      done[nextToPrint] = Buffer.alloc(0);
      nextToPrint++;
    }
  };
  let cursor = 0;
  const worker = async (): Promise<void> => {
    while (cursor < inputs.length) {
      const i = cursor++;
      const input = inputs[i]!;
      let outcome: Outcome;
      let bytes: Buffer | undefined;
      try {
        bytes = await input.read();
        outcome = { ok: true, input: bytes, reply: await client.scan(bytes, scanOptions(o, input.name)) };
      } catch (e) {
        failures++;
        const connection = isScanClientError(e) && (e.code === 'MAILSIFT_CLIENT_CONNECT' || e.code === 'MAILSIFT_CLIENT_TIMEOUT');
        outcome = { ok: false, input: bytes, error: (e as Error).message, connection };
        if (connection) process.stderr.write(`${input.name}: ${(e as Error).message}\n`);
      }
      done[i] = render(o, input.name, outcome, tty);
      bar?.increment();
      if (!bar) flush();
    }
  };
  await Promise.all(Array.from({ length: Math.min(o.maxRequests, inputs.length) }, worker));
  bar?.stop();
  flush();
  client.close();
  return failures > 0 ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (e: unknown) => {
    process.stderr.write(`mailsiftc: ${(e as Error).stack ?? String(e)}\n`);
    process.exitCode = 1;
  });
}
