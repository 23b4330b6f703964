// Legacy SPAMC / RSPAMC lines through the proxy: the request goes upstream
// as an ordinary /checkv2, and the scanner's JSON comes back here to be rendered in the client's
// dialect by the renderers the normal worker uses (src/protocol/render-text.ts), with the same
// legacy_compat switch, so a client sees the bytes a direct connection gives.

import { classifyError, MailsiftError } from '../http/errors.js';
import type { Request } from '../http/types.js';
import type { Logger } from '../plugin-api/index.js';
import { isLegacyCommand, planLegacyCommand, renderLegacyError, renderLegacyPong, type LegacyCommand, type LegacyCompat, type LegacyDialect } from '../protocol/legacy-command.js';
import { legacyBody, legacyRelayHeaders } from '../protocol/legacy-request.js';
import { renderLegacyFromBody } from '../protocol/render-text.js';
import type { RelayRequest, RelayResponse, ScanRelay } from './relay-types.js';

export interface ProxyLegacyOptions {
  relay: ScanRelay;
  log: Logger;
  compat: LegacyCompat;
  /** Largest message a `Compress: zlib` body may inflate to. */
  maxMessage: number;
  /** The proxy's own header clean-up (hop-by-hop, shm) applied after the legacy one. */
  keepHeader: (lowerName: string) => boolean;
  /** An error that is not a coded one (a bug), for the error log. */
  onUnknown: (err: unknown) => void;
}

const headerOf = (res: RelayResponse, name: string): string | undefined => res.headers.find(([k]) => k.toLowerCase() === name)?.[1];

const hasFlag = (value: string | undefined, flag: string): boolean => value !== undefined && value.split(/[\s,]+/).some((f) => f.toLowerCase() === flag);

/** The scanner's error text of a failed reply: its `error` field, else the status line. */
function errorText(res: RelayResponse): string {
  try {
    const v: unknown = JSON.parse(res.body.toString('utf8'));
    if (typeof v === 'object' && v !== null && typeof (v as { error?: unknown }).error === 'string') return (v as { error: string }).error;
  } catch {
    // not JSON: the status line says enough
  }
  return `${res.status} ${res.reason}`.trim();
}

/**
 * A scanner's error status as the coded error the legacy status line is made of: a message too
 * large is the client's data (EX_DATAERR, as directly), any other 4xx a request the scanner
 * refused (EX_PROTOCOL), a 5xx the scanner's failure (EX_TEMPFAIL, like the relay's own).
 */
export function upstreamStatusError(res: RelayResponse): MailsiftError {
  const text = `upstream: ${errorText(res)}`;
  if (res.status === 413) return new MailsiftError('ERR_BODY_TOO_LARGE', text);
  if (res.status >= 400 && res.status < 500) return new MailsiftError('ERR_RELAY_REQUEST_REFUSED', text);
  return new MailsiftError('ERR_RELAY_UPSTREAM_ERROR', text);
}

/**
 * The upstream request's headers: the client's (legacyRelayHeaders decides about `User`), and
 * for PROCESS/HEADERS `body_block` added to `Flags`, since those replies carry the message as the
 * scanner rewrote it. Merged into the client's `Flags` line: Rspamd reads one `Flags` header.
 */
function upstreamHeaders(req: Request, command: LegacyCommand, o: ProxyLegacyOptions): Array<[string, string]> {
  const headers = legacyRelayHeaders(req, o.compat).filter(([name]) => o.keepHeader(name.toLowerCase()));
  if (command !== 'PROCESS' && command !== 'HEADERS') return headers;
  const i = headers.findIndex(([name]) => name.toLowerCase() === 'flags');
  if (i < 0) headers.push(['Flags', 'body_block']);
  else if (!hasFlag(headers[i]![1], 'body_block')) headers[i] = [headers[i]![0], `${headers[i]![1]},body_block`];
  return headers;
}

/** One legacy request through the relay: the reply bytes, the connection closes after them. */
export async function proxyLegacyReply(req: Request, dialect: LegacyDialect, o: ProxyLegacyOptions): Promise<Buffer> {
  const command = req.method;
  const refuse = (err: unknown): Buffer => {
    // A coded error is the client's request or a known failure; anything else is a bug.
    if (classifyError(err).known) o.log.info('legacy request refused', { dialect, command: command.slice(0, 32), err: String((err as Error).message) });
    else o.onUnknown(err);
    return renderLegacyError(dialect, err);
  };
  // The transport admits only the verbs it knows; this guard keeps the type honest.
  if (!isLegacyCommand(command)) return refuse(new MailsiftError('ERR_LEGACY_COMMAND', `Unknown ${dialect} command`));
  const plan = planLegacyCommand(dialect, command, o.compat);
  if (plan.kind === 'pong') return renderLegacyPong(dialect);
  if (plan.kind === 'refuse') return refuse(plan.error);
  if (plan.kind === 'close') {
    o.log.info('legacy request closed without a reply', { dialect, command, why: plan.why });
    return Buffer.alloc(0);
  }
  try {
    // The scanner gets the message itself: `Compress: zlib` is a legacy framing /checkv2 lacks.
    const message = legacyBody(req, o.maxMessage);
    const host = req.headers.first('host');
    const upstream: RelayRequest = {
      method: 'POST',
      path: '/checkv2',
      headers: upstreamHeaders(req, command, o),
      body: message,
      route: { ...(host !== undefined ? { host: host.trim() } : {}), ...(req.peer.address ? { clientAddress: req.peer.address } : {}) },
    };
    const res = await o.relay.relay(upstream);
    if (res.status !== 200) return refuse(upstreamStatusError(res));
    let json = res.body;
    let block: Buffer | undefined;
    const offset = headerOf(res, 'message-offset')?.trim();
    if (offset !== undefined && /^\d+$/.test(offset) && Number(offset) <= res.body.length) {
      json = res.body.subarray(0, Number(offset));
      block = res.body.subarray(Number(offset));
      if (block.length === 0) block = undefined;
    }
    const rewrites = command === 'PROCESS' || command === 'HEADERS';
    const clientBlock = !rewrites && req.headers.all('flags').some((v) => hasFlag(v, 'body_block'));
    return renderLegacyFromBody(dialect, command, json, {
      compat: o.compat,
      message,
      ...(rewrites && block ? { rewritten: block } : {}),
      ...(clientBlock && block ? { bodyBlock: block } : {}),
    });
  } catch (err) {
    return refuse(err);
  }
}
