// One milter connection from an MTA: frames in, one scan per
// message through the ScanRelay, the verdict's frames out. Commands are handled strictly in
// order; while a message is being scanned, later frames wait in the reader.
//
// Where this departs from Rspamd 3.4's milter, and why (numbered across this file,
// render-verdict.ts and session-state.ts):
//  1. FIXED. OPTNEG honours the MTA's offer: protocol = offer ∩ NR_* (Rspamd forces 0xFF080),
//     actions = offer ∩ 0x1FF (Rspamd adds 0x3F even when not offered), version = min(offer, 6)
//     (Rspamd closes the connection below 6). A command whose NR bit was not granted gets
//     SMFIR_CONTINUE, and a verdict frame whose ability was not granted is left out with a log
//     line. Postfix and Sendmail ≥ 8.14 offer everything, so they see Rspamd's exact bytes.
//  2. FIXED. The `GET /ping` answer on the milter port ends with the body `pong\r\n`; Rspamd
//     also sends the C string's NUL after it, outside the Content-Length.
//  8. FIXED. A connection silent for `idleTimeoutMs` while we wait for it is closed (Rspamd
//     has no milter timeout at all). Time spent scanning never counts.
// 12. FIXED. BODYEOB without any message data is scanned like any message (an empty body with
//     whatever envelope arrived), so every EOB gets a verdict; Rspamd closes the connection
//     without a reply and the MTA applies its milter_default_action.
// Also: a BODYEOB payload is the last body chunk (milter protocol); Rspamd ignores it.

import type net from 'node:net';
import { parseEnvelopePath } from '../../protocol/envelope.js';
import { DEFAULT_SERVER_NAME } from '../../http/server-name.js';
import type { Logger } from '../../plugin-api/index.js';
import type { RelayRequest, ScanRelay } from '../relay-types.js';
import { buildScanRequest } from './build-request.js';
import { MilterInputError, parseConnect, parseEnvelopeArg, parseHeader, parseHelo, parseMacros, parseOptNeg } from './commands.js';
import { FrameReader, type MilterFrame } from './frame-reader.js';
import type { MilterOptions } from './options.js';
import { ACTIONS_WANTED, Cmd, encodeReply, MILTER_MIN_VERSION, MILTER_VERSION, NR_ALL, NR_BIT_OF_COMMAND, type MilterReply } from './protocol.js';
import { readScanReply } from './read-reply.js';
import { renderVerdict, tempfailVerdict, withinGrant, type Verdict } from './render-verdict.js';
import { asciiLower, SessionState, type FinishedMessage } from './session-state.js';

export interface MilterContext {
  relay: ScanRelay;
  config: MilterOptions;
  log: Logger;
}

/** Frames handled in one go before other connections get the event loop. */
const MAX_FRAMES_PER_TURN = 256;
/** Bytes a peer may send while its message is being scanned before we stop reading it. */
const MAX_PENDING_WHILE_SCANNING = 256 * 1024;
/**
 * Replies the MTA has not read yet, past which we stop reading its commands: a peer that never
 * reads would otherwise grow our write buffer (a CONTINUE per command, a large REPLBODY).
 */
const MAX_UNREAD_REPLIES = 1024 * 1024;
/** After we end a session, how long the peer has to read our last bytes and close. */
const CLOSE_GRACE_MS = 5_000;
/** TCP keep-alive probes find an MTA host that vanished without closing (idle milter links). */
const KEEPALIVE_MS = 60_000;

const PONG = Buffer.from(
  'HTTP/1.1 200 OK\r\nConnection: close\r\n' +
    `Server: ${DEFAULT_SERVER_NAME} (milter mode)\r\n` +
    'Content-Length: 6\r\nContent-Type: text/plain\r\n\r\npong\r\n',
  'latin1',
);

let sessionSeq = 0;

function errorText(err: unknown): string {
  if (err && typeof err === 'object') {
    const e = err as { code?: unknown; message?: unknown };
    const msg = typeof e.message === 'string' ? e.message : String(err);
    return typeof e.code === 'string' ? `${e.code}: ${msg}` : msg;
  }
  return String(err);
}

function header(req: RelayRequest, name: string): string | undefined {
  return req.headers.find(([k]) => k === name)?.[1];
}

export class MilterSession {
  readonly #socket: net.Socket;
  readonly #ctx: MilterContext;
  readonly #opts: MilterOptions;
  readonly #fields: Record<string, unknown>;
  readonly #reader = new FrameReader();
  readonly #state: SessionState;
  /** What OPTNEG granted; before any OPTNEG, what Rspamd assumes (everything). */
  #grantedActions = ACTIONS_WANTED;
  #grantedProtocol = NR_ALL;
  /** A message is being scanned: later frames wait. */
  #scanning = false;
  /**
   * Aborts the scan in flight when the connection ends. One per session, made at its first scan:
   * only the connection's end aborts a scan, and no scan starts after that.
   */
  #abort: AbortController | undefined;
  #closed = false;
  #turnScheduled = false;
  #graceTimer: NodeJS.Timeout | undefined;
  /** Why reading from the MTA is paused: a scan with much input waiting, replies not read. */
  #pauses = new Set<'scan' | 'drain'>();
  /** The worker is stopping: deliver the verdict being computed, then close (shutdown()). */
  #stopping = false;

  constructor(socket: net.Socket, ctx: MilterContext) {
    this.#socket = socket;
    this.#ctx = ctx;
    this.#opts = ctx.config;
    this.#state = new SessionState(ctx.config);
    const peer = socket.remoteAddress !== undefined ? `${socket.remoteAddress}:${socket.remotePort ?? 0}` : 'unix';
    this.#fields = { session: `milter-${++sessionSeq}`, peer };
  }

  start(): void {
    const s = this.#socket;
    s.setNoDelay(true);
    s.setKeepAlive(true, KEEPALIVE_MS);
    s.setTimeout(this.#opts.idleTimeoutMs);
    s.on('timeout', () => {
      this.#log('info', 'milter connection idle too long, closing', { idleMs: this.#opts.idleTimeoutMs });
      this.#destroy();
    });
    s.on('data', (chunk: Buffer) => this.#onData(chunk));
    s.on('end', () => {
      if (this.#closed) return;
      if (this.#scanning) this.#log('info', 'MTA closed the milter connection during a scan');
      else this.#log('debug', 'MTA closed the milter connection');
      this.#end();
    });
    s.on('error', (err: NodeJS.ErrnoException) => {
      const level = err.code === 'ECONNRESET' || err.code === 'EPIPE' ? 'debug' : 'warn';
      this.#log(level, 'milter connection error', { error: errorText(err) });
      this.#destroy();
    });
    s.on('close', () => {
      this.#closed = true;
      this.#abort?.abort();
      if (this.#graceTimer) clearTimeout(this.#graceTimer);
    });
  }

  #log(level: 'debug' | 'info' | 'warn' | 'error', msg: string, extra: Record<string, unknown> = {}): void {
    this.#ctx.log[level](msg, { ...this.#fields, ...extra });
  }

  #onData(chunk: Buffer): void {
    if (this.#closed) return;
    this.#reader.push(chunk);
    if (this.#scanning && this.#reader.buffered > MAX_PENDING_WHILE_SCANNING) this.#pause('scan');
    this.#pump();
  }

  #pump(): void {
    try {
      for (let n = 0; n < MAX_FRAMES_PER_TURN; n++) {
        if (this.#closed || this.#scanning) return;
        const r = this.#reader.next();
        switch (r.kind) {
          case 'need-more':
            return;
          case 'error':
            return this.#protocolError(r.message);
          case 'http':
            return this.#http(r.method, r.url);
          case 'frame':
            this.#command(r.frame);
        }
      }
      if (!this.#turnScheduled) {
        this.#turnScheduled = true;
        setImmediate(() => {
          this.#turnScheduled = false;
          this.#pump();
        });
      }
    } catch (err) {
      if (err instanceof MilterInputError) this.#protocolError(err.message);
      else this.#bug(err);
    }
  }

  #command(f: MilterFrame): void {
    const st = this.#state;
    switch (f.cmd) {
      case Cmd.OPTNEG:
        return this.#optneg(f.data);
      case Cmd.MACRO: {
        const m = parseMacros(f.data);
        st.setMacros(m.stage, m.pairs);
        return;
      }
      case Cmd.CONNECT:
        st.connect(parseConnect(f.data));
        break;
      case Cmd.HELO:
        st.helo = parseHelo(f.data);
        break;
      case Cmd.MAIL: {
        // Kept as the MTA wrote it (`<a@b>`), only when it is an address (Rspamd: else no From).
        const sender = parseEnvelopeArg(f.data);
        st.from = parseEnvelopePath(sender) !== undefined ? sender : undefined;
        break;
      }
      case Cmd.RCPT: {
        const rcpt = parseEnvelopeArg(f.data);
        if (parseEnvelopePath(rcpt) !== undefined) st.rcpt(rcpt);
        break;
      }
      case Cmd.DATA:
        break;
      case Cmd.HEADER:
        st.header(parseHeader(f.data));
        break;
      case Cmd.EOH:
        st.endOfHeaders();
        break;
      case Cmd.BODY:
        st.body(f.data);
        break;
      case Cmd.BODYEOB:
        if (f.data.length > 0) st.body(f.data);
        return this.#endOfMessage();
      case Cmd.ABORT:
        st.resetMessage();
        return;
      case Cmd.QUIT_NC:
        st.resetConnection();
        return;
      case Cmd.QUIT:
        this.#log('debug', 'MTA quit');
        return this.#end();
      case Cmd.UNKNOWN:
        break;
    }
    // Commands that expect a reply unless OPTNEG granted their "no reply" bit.
    const nr = NR_BIT_OF_COMMAND.get(f.cmd);
    if (nr !== undefined && (this.#grantedProtocol & nr) === 0) this.#write([{ kind: 'continue' }]);
  }

  #optneg(data: Buffer): void {
    const o = parseOptNeg(data);
    if (o.version < MILTER_MIN_VERSION) throw new MilterInputError(`MTA offers milter protocol version ${o.version}`);
    this.#grantedActions = o.actions & ACTIONS_WANTED;
    this.#grantedProtocol = o.protocol & NR_ALL;
    const version = Math.min(o.version, MILTER_VERSION);
    if (version < MILTER_VERSION || this.#grantedProtocol !== NR_ALL || this.#grantedActions !== ACTIONS_WANTED) {
      this.#log('debug', 'MTA offers less than milter v6 with every option; negotiated the common part', {
        offered: { version: o.version, actions: o.actions, protocol: o.protocol },
        granted: { version, actions: this.#grantedActions, protocol: this.#grantedProtocol },
      });
    }
    this.#write([{ kind: 'optneg', version, actions: this.#grantedActions, protocol: this.#grantedProtocol }]);
  }

  #endOfMessage(): void {
    const msg = this.#state.finishMessage();
    // The request reads the message's macros, which the reset drops.
    const req = msg.oversize ? undefined : buildScanRequest(this.#state, msg, this.#buildOptions());
    this.#state.resetMessage();
    if (!req) {
      // Larger than max_message: not scanned (the scanner would refuse it), and accepted, as
      // mail filters do with messages above their size limit, rather than deferred forever.
      this.#log('info', 'message over max_message accepted without a scan', { size: msg.size, maxMessage: this.#opts.maxMessage });
      this.#write([{ kind: 'accept' }]);
      return;
    }
    this.#abort ??= new AbortController();
    this.#scanning = true;
    this.#socket.setTimeout(0); // the MTA waits for us now: its own milter timeouts apply
    const started = Date.now();
    void this.#verdict(req, msg, this.#abort.signal)
      .then((v) => this.#deliver(v, req, started))
      .catch((err: unknown) => this.#bug(err))
      .finally(() => {
        this.#scanning = false;
        if (this.#closed) return;
        if (this.#stopping) return this.#end();
        this.#socket.setTimeout(this.#opts.idleTimeoutMs);
        this.#unpause('scan');
        this.#pump();
      });
  }

  /**
   * The worker is stopping. An idle session closes now (the MTA applies its default action to
   * the transaction, or reconnects elsewhere); one whose message is being scanned first
   * delivers that verdict, then closes. Commands still buffered are not read. Closing the
   * socket under a session instead made the verdict's write fail ("write after end") and the
   * MTA lose a verdict the scanner had given.
   */
  shutdown(): void {
    if (this.#closed) return;
    this.#stopping = true;
    if (!this.#scanning) this.#end();
  }

  #buildOptions(): { clientCaName?: string; clientAddress?: string } {
    const o: { clientCaName?: string; clientAddress?: string } = {};
    if (this.#opts.clientCaName !== undefined) o.clientCaName = this.#opts.clientCaName;
    if (this.#socket.remoteAddress !== undefined) o.clientAddress = this.#socket.remoteAddress;
    return o;
  }

  /** Any failure to get a usable result is one TEMPFAIL; the session goes on. */
  async #verdict(req: RelayRequest, msg: FinishedMessage, signal: AbortSignal): Promise<Verdict & { upstream?: string }> {
    let res;
    try {
      res = await this.#ctx.relay.relay(req, signal);
    } catch (err) {
      return tempfailVerdict(`scan failed: ${errorText(err)}`);
    }
    const reading = readScanReply(res);
    if (!reading.ok) return { ...tempfailVerdict(reading.reason), upstream: res.upstream };
    try {
      const input = { result: reading.result, headerCount: msg.headerCount, headerOccurrences: msg.headerOccurrences };
      const v = renderVerdict(reading.newBody ? { ...input, newBody: reading.newBody } : input, this.#opts);
      return { ...v, upstream: res.upstream };
    } catch (err) {
      this.#log('error', 'cannot turn the scan result into milter replies (bug)', { error: errorText(err) });
      return { ...tempfailVerdict('internal error'), upstream: res.upstream };
    }
  }

  #deliver(v: Verdict & { upstream?: string }, req: RelayRequest, started: number): void {
    const fields: Record<string, unknown> = { qid: header(req, 'Queue-ID'), action: v.action, reply: v.outcome, upstream: v.upstream, ms: Date.now() - started };
    if (this.#closed) {
      this.#log('info', 'scan finished after the MTA left; verdict dropped', fields);
      return;
    }
    const { replies, dropped } = withinGrant(v.replies, this.#grantedActions);
    for (const p of v.problems) this.#log(p.level, `milter verdict: ${p.text}`, fields);
    if (dropped.length > 0) this.#log('warn', 'MTA did not grant these milter actions in OPTNEG; left out', { ...fields, dropped });
    this.#write(replies);
    // Debug: the scanner writes the one info line of this scan (with the Queue-ID); a second one
    // here cost about a sixth of the milter relay's CPU per message in the bench.
    this.#log('debug', 'milter verdict', fields);
  }

  #http(method: string, url: string): void {
    if (method === 'GET' && asciiLower(url) === '/ping') {
      this.#log('debug', 'HTTP ping on the milter port');
      this.#socket.write(PONG);
      this.#end();
      return;
    }
    this.#protocolError(`HTTP ${method} request is not supported in milter mode, url: ${url.slice(0, 200)}`);
  }

  #write(replies: readonly MilterReply[]): void {
    if (this.#closed || this.#socket.destroyed || replies.length === 0) return;
    this.#socket.write(replies.length === 1 ? encodeReply(replies[0]!) : Buffer.concat(replies.map(encodeReply)));
    if (this.#socket.writableLength > MAX_UNREAD_REPLIES && !this.#pauses.has('drain')) {
      this.#pause('drain');
      this.#socket.once('drain', () => this.#unpause('drain'));
    }
  }

  #pause(reason: 'scan' | 'drain'): void {
    this.#pauses.add(reason);
    this.#socket.pause();
  }

  #unpause(reason: 'scan' | 'drain'): void {
    if (this.#pauses.delete(reason) && this.#pauses.size === 0 && !this.#closed) this.#socket.resume();
  }

  /** Bad input: close this connection without a reply (the MTA applies its default action). */
  #protocolError(message: string): void {
    this.#log('warn', 'milter protocol error, closing the connection', { error: message });
    // Stop reading: the rest of a hostile stream is not worth receiving.
    this.#socket.pause();
    this.#end();
  }

  #bug(err: unknown): void {
    this.#log('error', 'milter session failed (bug), closing the connection', { error: errorText(err), stack: err instanceof Error ? err.stack : undefined });
    this.#destroy();
  }

  /** Finish: flush what we wrote, then close; a peer that does not close in time is cut. */
  #end(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#abort?.abort();
    this.#socket.setTimeout(0);
    this.#socket.end();
    this.#graceTimer = setTimeout(() => this.#socket.destroy(), CLOSE_GRACE_MS);
    this.#graceTimer.unref();
  }

  #destroy(): void {
    this.#closed = true;
    this.#abort?.abort();
    this.#socket.destroy();
  }
}

/** Starts the session of a new connection; undefined when it could not be started (the socket is destroyed). */
export function handleMilterConnection(socket: net.Socket, ctx: MilterContext): MilterSession | undefined {
  try {
    const session = new MilterSession(socket, ctx);
    session.start();
    return session;
  } catch (err) {
    ctx.log.error('cannot start a milter session', { error: errorText(err) });
    socket.destroy();
    return undefined;
  }
}
