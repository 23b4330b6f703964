// The normal worker: the scan route table. /checkv2, the legacy v1 paths, /skip, /checkv3
// and /ping, plus the spamc/RSPAMC text dialects; anything else is `invalid command` (404). Paths match case-insensitively and
// exactly. Scan requests go request → protocol decode → Scanner → protocol render; a legacy
// text request is rendered from the same v2 result object the proxy gets from an upstream.

import { encode as msgpackEncode } from '@msgpack/msgpack';
import { classifyError, MailsiftError } from '../http/errors.js';
import { replyForError } from '../http/reply.js';
import { createTransport, DEFAULT_MAX_BODY_BYTES, type TransportOptions } from '../http/server.js';
import type { Reply, Request } from '../http/types.js';
import { loadDictionaries, type DictionaryFiles, type DictionarySet } from '../http/zstd.js';
import { LOOPBACK_NETWORKS, PeerNetworks } from '../http/peer-networks.js';
import type { Scanner } from '../engine/contract.js';
import type { ScanResult } from '../plugin-api/index.js';
import type { Logger } from '../plugin-api/index.js';
import { decodeV2Request } from '../protocol/decode-v2.js';
import { decodeV3Request } from '../protocol/parse-v3.js';
import { loadMessageSource, namesMessageSource, type LoadedSource, type MessageSourcePolicy } from '../protocol/message-source.js';
import { bodyBlockOf, buildV2Reply, renderResultObject } from '../protocol/reply-v2.js';
import { renderLegacyReply } from '../protocol/render-text.js';
import { DEFAULT_LEGACY_COMPAT, isLegacyCommand, planLegacyCommand, renderLegacyError, renderLegacyPong, type LegacyCompat, type LegacyDialect } from '../protocol/legacy-command.js';
import { decodeLegacyRequest } from '../protocol/legacy-request.js';
import { buildV3Reply } from '../protocol/render-v3.js';
import type { ReplyLayout, ScanRequest } from '../protocol/scan-request.js';
import type { ScanObserver } from '../observability/scan-observer.js';
import { listenTransport, type ListenOptions, type RunningWorker } from './listen.js';
import { peekMessageId, type ScanBoard } from './scan-board.js';
import { ConnectionShare } from './conn-balance.js';

export type { RunningWorker } from './listen.js';

export interface NormalWorkerOptions {
  host: string;
  port: number;
  scanner: Scanner;
  /** Largest message (request body, and decompressed body), bytes. Default 50 MiB. */
  maxMessage?: number;
  /** zstd dictionaries: file paths or bytes, ids read from the dictionaries. */
  dictionaries?: DictionaryFiles;
  log: Logger;
  /** `Server:` header, e.g. `mailsift/0.1.0`. */
  serverName?: string;
  /** Transport limits and time-outs (see TransportOptions). */
  transport?: Omit<TransportOptions, 'maxBodyBytes' | 'serverName' | 'onUnknownError'>;
  /** HTTPS listener and whether to keep the plain one (src/workers/listen.ts). */
  listen?: ListenOptions;
  /** Called after every scan (statistics, history); must not throw or block. */
  onScan?: ScanObserver;
  /** Called for every accepted connection (the `connections` counter). */
  onConnection?: () => void;
  /** Peers allowed to name the message by `File` or `Shm` (workers.normal.file_input_peers); loopback by default. */
  fileInputPeers?: readonly string[];
  /** Where scans in flight are written down for the watchdog (scan-board.ts). */
  board?: ScanBoard;
  /** spamc/RSPAMC behaviour (workers.normal.legacy_compat): `spamd` (default) or Rspamd 3.4's `rspamd`. */
  legacyCompat?: LegacyCompat;
  /** A cluster worker: hand kept-alive connections over to less loaded workers (conn-balance.ts). */
  balanceConnections?: boolean;
}

type Route = { kind: 'ping' } | { kind: 'v2'; layout: ReplyLayout } | { kind: 'v3' };

/** Path (lower-case, with leading slash) → route. */
const ROUTES: ReadonlyMap<string, Route> = new Map<string, Route>([
  ['/ping', { kind: 'ping' }],
  ['/checkv2', { kind: 'v2', layout: 'v2' }],
  ['/checkv3', { kind: 'v3' }],
  ['/skip', { kind: 'v2', layout: 'skip' }],
  ['/check', { kind: 'v2', layout: 'v1' }],
  ['/symbols', { kind: 'v2', layout: 'v1' }],
  ['/scan', { kind: 'v2', layout: 'v1' }],
  ['/process', { kind: 'v2', layout: 'v1' }],
  ['/report', { kind: 'v2', layout: 'v1' }],
  ['/report_ifspam', { kind: 'v2', layout: 'v1' }],
]);

const PONG: Reply = { status: 200, contentType: 'text/plain', body: Buffer.from('pong\r\n') };

export function createNormalHandler(opts: {
  scanner: Scanner;
  maxMessage: number;
  dictionaries: DictionarySet;
  log: Logger;
  onScan?: ScanObserver;
  fileInputPeers?: readonly string[];
  board?: ScanBoard;
  legacyCompat?: LegacyCompat;
}): (req: Request) => Promise<Reply> | Reply {
  const { scanner, maxMessage, dictionaries, log, onScan, board } = opts;
  const compat = opts.legacyCompat ?? DEFAULT_LEGACY_COMPAT;
  const sources: MessageSourcePolicy = {
    peers: new PeerNetworks(opts.fileInputPeers ?? LOOPBACK_NETWORKS),
    maxMessage,
    peersKey: 'workers.normal.file_input_peers',
  };
  /** The request with its body replaced by the message its Shm/File headers name. */
  const withSource = async (req: Request, protocol: 'v2' | 'v3'): Promise<{ req: Request; source?: LoadedSource }> => {
    const loaded = await loadMessageSource(req, sources, protocol);
    if (!loaded) return { req };
    log.debug('message read from a local source', { ...loaded.source });
    return loaded;
  };
  const observe = (sr: ScanRequest, result: ScanResult, startedAt: number, t0: bigint, legacy: boolean): void => {
    if (!onScan) return;
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    onScan({ result, meta: sr.meta, message: sr.message, startedAt, seconds, legacy });
  };
  const onUnknown = (err: unknown): void => log.error('scan request failed', { err: String((err as Error)?.stack ?? err) });
  const decodeOpts = { maxMessage, dictionaries, log };

  /** Scans and records the scan (history, stats); a scanner that throws is logged and reported as ERR_SCAN_FAILED. */
  async function scanObserved(sr: ScanRequest, legacyLayout: boolean): Promise<ScanResult> {
    let result;
    const startedAt = Date.now();
    const t0 = process.hrtime.bigint();
    // Written before the scan runs: a scan that stalls the loop stalls it before any later report.
    const slot = board?.begin({ what: 'scan', messageId: sr.meta.raw ? undefined : peekMessageId(sr.message), queueId: sr.meta.queueId, startedAt });
    try {
      result = await scanner.scan(sr.message, sr.meta);
    } catch (err) {
      log.error('scanner threw', { err: String((err as Error)?.stack ?? err) });
      throw new MailsiftError('ERR_SCAN_FAILED', 'scan failed');
    } finally {
      if (slot !== undefined) board?.end(slot);
    }
    // The scan's one log line is written by the observer (scan-log.ts), for every kind of worker.
    observe(sr, result, startedAt, t0, legacyLayout);
    return result;
  }

  async function scan(sr: ScanRequest, v3: boolean): Promise<Reply> {
    const result = await scanObserved(sr, sr.want.layout === 'v1');
    return v3 ? buildV3Reply(result, sr.meta, sr.want) : buildV2Reply(result, sr.meta, sr.want, dictionaries);
  }

  /**
   * A spamc/RSPAMC text request: one reply (or, for SKIP and Rspamd-compatible refusals, none)
   * and the connection closes. Every failure is answered in the client's dialect.
   */
  async function scanLegacy(req: Request, dialect: LegacyDialect): Promise<Reply> {
    const text = (body: Buffer): Reply => ({ status: 200, raw: true, close: true, body });
    const refuse = (err: unknown): Reply => {
      // A coded error is the client's request or a known failure; anything else is a bug.
      if (!classifyError(err).known) onUnknown(err);
      else log.info('legacy request refused', { dialect, command: req.method.slice(0, 32), err: String((err as Error)?.message ?? err) });
      return text(renderLegacyError(dialect, err));
    };
    const command = req.method;
    // The transport admits only the verbs it knows; this guard keeps the type honest.
    if (!isLegacyCommand(command)) return refuse(new MailsiftError('ERR_LEGACY_COMMAND', `Unknown ${dialect} command`));
    const plan = planLegacyCommand(dialect, command, compat);
    if (plan.kind === 'pong') return text(renderLegacyPong(dialect));
    if (plan.kind === 'refuse') return refuse(plan.error);
    if (plan.kind === 'close') {
      log.info('legacy request closed without a reply', { dialect, command, why: plan.why });
      return text(Buffer.alloc(0));
    }
    try {
      if (namesMessageSource(req, 'v2')) ({ req } = await withSource(req, 'v2'));
      const sr = decodeLegacyRequest(req, decodeOpts);
      const result = await scanObserved(sr, false);
      // Rendering is inside the guard too: a bug there is logged and answered, never a dropped connection.
      const block = sr.meta.flags.has('body_block') ? bodyBlockOf(result, sr.meta.flags.has('milter')) : undefined;
      const json = renderResultObject(result, sr.meta, 'v2');
      return text(renderLegacyReply(dialect, command, json, { compat, message: sr.message, ...(result.rewritten ? { rewritten: result.rewritten } : {}), ...(block ? { bodyBlock: block } : {}) }));
    } catch (err) {
      return refuse(err);
    }
  }

  return (req: Request): Promise<Reply> | Reply => {
    if (req.legacy) return scanLegacy(req, req.legacy);
    const route = ROUTES.get(req.path.toLowerCase());
    if (!route) return replyForError(new MailsiftError('ERR_UNKNOWN_COMMAND', 'invalid command'));
    if (route.kind === 'ping') return PONG;
    const wantsMsgpack = route.kind === 'v2' && (req.headers.first('accept') ?? '').includes('application/msgpack');
    const fail = (err: unknown): Reply => {
      const reply = replyForError(err, onUnknown);
      if (wantsMsgpack && typeof reply.body === 'string') {
        reply.body = Buffer.from(msgpackEncode(JSON.parse(reply.body) as unknown));
        reply.contentType = 'application/msgpack';
      }
      return reply;
    };
    const decodeAndScan = (req: Request, source?: LoadedSource): Promise<Reply> | Reply => {
      try {
        const sr = route.kind === 'v3' ? decodeV3Request(req, decodeOpts) : decodeV2Request(req, route.layout, decodeOpts);
        // v3 takes tls from its metadata; a verified client certificate fills the gap (src/http/tls.ts).
        const issuer = req.tlsCertIssuer;
        if (issuer !== undefined && sr.meta.tls?.certIssuer === undefined) (sr.meta.tls ??= {}).certIssuer = issuer;
        // Rspamd keeps a File input's path as the task's file name.
        if (source?.kind === 'file' && sr.meta.filename === undefined) sr.meta.filename = source.name;
        return scan(sr, route.kind === 'v3').catch(fail);
      } catch (err) {
        return fail(err);
      }
    };
    const protocol = route.kind === 'v3' ? 'v3' : 'v2';
    // Only a request naming a local source takes the asynchronous read.
    if (namesMessageSource(req, protocol)) return withSource(req, protocol).then((r) => decodeAndScan(r.req, r.source), fail);
    return decodeAndScan(req);
  };
}

export async function startNormalWorker(opts: NormalWorkerOptions): Promise<RunningWorker> {
  const maxMessage = opts.maxMessage ?? DEFAULT_MAX_BODY_BYTES;
  const handler = createNormalHandler({
    scanner: opts.scanner,
    maxMessage,
    dictionaries: loadDictionaries(opts.dictionaries),
    log: opts.log,
    ...(opts.onScan ? { onScan: opts.onScan } : {}),
    ...(opts.fileInputPeers ? { fileInputPeers: opts.fileInputPeers } : {}),
    ...(opts.board ? { board: opts.board } : {}),
    ...(opts.legacyCompat ? { legacyCompat: opts.legacyCompat } : {}),
  });
  let share: ConnectionShare | undefined;
  const transport = createTransport(handler, {
    ...opts.transport,
    ...(opts.balanceConnections ? { shedKeepAlive: (open: number) => share?.shed(open) ?? false } : {}),
    maxBodyBytes: maxMessage,
    ...(opts.serverName ? { serverName: opts.serverName } : {}),
    onUnknownError: (err) => opts.log.error('transport error', { err: String((err as Error)?.stack ?? err) }),
    legacyError: (dialect, err) => {
      opts.log.info('legacy request refused', { dialect, err: String((err as Error)?.message ?? err) });
      return renderLegacyError(dialect, err);
    },
  });
  const onConnection = opts.onConnection;
  if (onConnection) transport.server.on('connection', () => onConnection());
  const running = await listenTransport(transport, opts.host, opts.port, opts.listen);
  const send = process.send?.bind(process);
  if (opts.balanceConnections && send) share = new ConnectionShare(() => transport.openConnections(), (m) => send(m));
  return {
    ...running,
    async close(how) {
      share?.stop();
      await running.close(how);
    },
  };
}
