// One rule's round trips: CHECK the hashes of a message against a read server, send WRITE/DEL
// (learn) commands to every write server, ask a storage for its hash count (STAT).
import { exchange, randomTag, type FuzzyUpstream, type UdpTransport } from './client.js';
import type { FuzzyHash } from './message-hashes.js';
import type { FuzzyRule } from './rule.js';
import { FUZZY_CHECK, FUZZY_STAT, PROTOCOL_VERSION, type FuzzyCommand, type FuzzyCommandCode, type FuzzyReply } from './wire.js';

const rrIndex = new WeakMap<FuzzyRule, number>();

/** Round-robin among the rule's read servers. */
function nextReadServer(rule: FuzzyRule): FuzzyUpstream | undefined {
  if (rule.readServers.length === 0) return undefined;
  const i = rrIndex.get(rule) ?? 0;
  rrIndex.set(rule, i + 1);
  return rule.readServers[i % rule.readServers.length];
}

function command(cmd: FuzzyCommandCode, hash: FuzzyHash | undefined, flag: number, value: number): FuzzyCommand {
  const c: FuzzyCommand = { version: PROTOCOL_VERSION, cmd, flag, value, tag: randomTag(), digest: hash?.digest ?? Buffer.alloc(64) };
  if (hash?.shingles) c.shingles = hash.shingles;
  return c;
}

function ioOptions(rule: FuzzyRule): Parameters<typeof exchange>[2] {
  const o: Parameters<typeof exchange>[2] = { timeoutMs: rule.timeoutMs, retransmits: rule.retransmits };
  if (rule.serverPublicKey && rule.localKeypair) {
    o.serverPublicKey = rule.serverPublicKey;
    o.localKeypair = rule.localKeypair;
  }
  return o;
}

export interface CheckOutcome {
  server?: FuzzyUpstream;
  pairs: Array<{ hash: FuzzyHash; reply: FuzzyReply }>;
  /** No reply at all for any command (time-out or unreachable). */
  failed: boolean;
}

/** `send`: the scanning task's `udp.exchange`. */
export async function checkHashes(rule: FuzzyRule, hashes: readonly FuzzyHash[], send: UdpTransport): Promise<CheckOutcome> {
  const server = nextReadServer(rule);
  if (!server || hashes.length === 0) return { pairs: [], failed: false };
  const cmds = hashes.map((h) => command(FUZZY_CHECK, h, 0, 0));
  const { replies } = await exchange(server, cmds, ioOptions(rule), send);
  const pairs = cmds.flatMap((c, i) => {
    const reply = replies.get(c.tag);
    return reply ? [{ hash: hashes[i]!, reply }] : [];
  });
  return { server, pairs, failed: replies.size === 0 };
}

export interface LearnOutcome {
  /** Servers that answered every command with success. */
  ok: number;
  /** Error codes servers answered with (e.g. 503 not allowed, 401 skipped). */
  errorCodes: number[];
  /** Servers that did not answer. */
  unreachable: number;
}

/** Send WRITE or DEL for `hashes` to every write server of the rule. */
export async function learnHashes(rule: FuzzyRule, cmd: FuzzyCommandCode, hashes: readonly FuzzyHash[], flag: number, weight: number): Promise<LearnOutcome> {
  const out: LearnOutcome = { ok: 0, errorCodes: [], unreachable: 0 };
  await Promise.all(rule.writeServers.map(async (server) => {
    const cmds = hashes.map((h) => command(cmd, h, flag, weight));
    const { replies } = await exchange(server, cmds, ioOptions(rule));
    if (replies.size === 0) {
      out.unreachable++;
      return;
    }
    const bad = [...replies.values()].filter((r) => r.value !== 0);
    if (bad.length) out.errorCodes.push(...bad.map((r) => r.value));
    else out.ok++;
  }));
  return out;
}

/** Stored hash count of a rule's (first read) storage; undefined when it does not answer. */
export async function storageCount(rule: FuzzyRule): Promise<number | undefined> {
  const server = rule.readServers[0];
  if (!server) return undefined;
  const c = command(FUZZY_STAT, undefined, 0, 0);
  const { replies } = await exchange(server, [c], ioOptions(rule));
  const r = replies.get(c.tag);
  if (!r) return undefined;
  return (r.value >>> 0) * 2 ** 32 + (r.flag >>> 0);
}
