// Findings: each saved as the raw request bytes (`<name>.bin`, replayable with --replay) and a
// small JSON beside it (`<name>.json`: surface, seed, index, kind, timings, what the server
// said). Findings of the same kind and cause are counted, and only the first few are saved.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KnownBug } from './known.js';
import type { Port } from './surface.js';
import type { LogRecord } from './server.js';

export type FindingKind = 'crash' | 'hang' | 'slow' | '5xx' | 'memory' | 'exception' | 'interference' | 'unlogged-close';

export interface Finding {
  surface: string;
  seed: number;
  /** Input index within the surface (Rng.forInput(seed, surface, index) regenerates it). */
  index: number;
  kind: FindingKind;
  port: Port;
  /** Mutations applied, as the generator noted them. */
  note: string;
  /** The known bug the input matches, if any. */
  known?: KnownBug;
  /** Confirmed by re-sending the input alone (crash, hang, slow), or seen directly (5xx). */
  confirmed: boolean;
  status?: number;
  /** First bytes of the reply body. */
  reply?: string;
  timings: { clientMs?: number; serverMs?: number; cpuMs?: number };
  /** For crashes: the exited worker and the log lines about it. */
  exit?: { role: string; pid: number; log: string[] };
  /** For memory: the process and its RSS. */
  memory?: { role: string; pid: number; baselineMiB: number; nowMiB: number };
  /** For exceptions: the key (message | module | symbol | error) and the server's log line. */
  exception?: { key: string; line: string };
  /** For interference: the canary's verdicts on a fresh server, and after this input. */
  canary?: { expected: string; got: string };
  bytes: number;
  date: string;
}

/**
 * What identifies one exception: the message, the module and symbol it names, and the error
 * text with numbers blanked (offsets and sizes differ from input to input).
 */
export function exceptionKey(r: LogRecord): string {
  const field = (k: string): string => (typeof r[k] === 'string' ? (r[k] as string) : '');
  const error = (field('error') || field('err').split('\n')[0] || '').replace(/\d+/g, 'N').slice(0, 200);
  // The message's fixed part only: a rule failure's text also carries its module, symbol and error.
  const what = r.msg.split(': ')[0]!.replace(/\d+/g, 'N');
  return [what, field('module'), field('symbol'), error].join(' | ');
}

/** How many findings with the same key are saved (the rest are only counted). */
const SAVED_PER_KEY = 3;

export class FindingStore {
  readonly #dir: string;
  readonly #perKey = new Map<string, number>();
  readonly all: Finding[] = [];
  saved = 0;

  constructor(dir: string) {
    this.#dir = dir;
    mkdirSync(dir, { recursive: true });
  }

  /** Records a finding; saves it unless SAVED_PER_KEY of the same key are already saved. Returns the path or undefined. */
  add(f: Finding, bytes: Buffer, key: string): string | undefined {
    this.all.push(f);
    const k = `${f.surface}|${f.kind}|${f.known ?? ''}|${key}`;
    const n = (this.#perKey.get(k) ?? 0) + 1;
    this.#perKey.set(k, n);
    // An exception is the same bug whatever input hits it: one saved per message + module.
    if (n > (f.kind === 'exception' ? 1 : SAVED_PER_KEY)) return undefined;
    const name = `${f.surface}-${f.kind}${f.known ? `-known-${f.known}` : ''}-s${f.seed}-i${f.index}`;
    writeFileSync(join(this.#dir, `${name}.bin`), bytes);
    writeFileSync(join(this.#dir, `${name}.json`), `${JSON.stringify(f, null, 2)}\n`);
    this.saved++;
    return join(this.#dir, `${name}.bin`);
  }

  /** Distinct keys per kind, for the summary. */
  distinct(): Map<string, number> {
    return this.#perKey;
  }
}
