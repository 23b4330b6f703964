// Binding a transport to host:port, the same way for every worker type: a plain listener, an
// HTTPS one (src/http/tls.ts), or both feeding one transport. Under node:cluster the primary
// owns the sockets and workers calling listen() share them.

import type { CloseOptions, Transport } from '../http/server.js';
import { listenTls, type TlsListener, type TlsListenOptions } from '../http/tls.js';
import type { WorkerTlsConfig } from '../config/schema-tls.js';
import type { Logger } from '../plugin-api/index.js';

export interface RunningWorker {
  /** The bound plain port (useful when 0 was asked for); 0 when the worker serves TLS only. */
  port: number;
  /** The bound HTTPS port, when the worker has a TLS listener. */
  tlsPort?: number;
  /** Re-reads the TLS certificate files for new handshakes (SIGHUP); throws and keeps the old ones on error. */
  reloadTls?(): void;
  /** Stops the worker's listeners; `drain` (a reload) lets open connections finish their next request first. */
  close(opts?: CloseOptions): Promise<void>;
}

export interface ListenOptions {
  /** An HTTPS listener for the same routes. */
  tls?: TlsListenOptions;
  /** Also listen in plain HTTP on host:port (default true; false needs `tls`). */
  plain?: boolean;
  /** A peer whose TLS handshake failed (no or bad client certificate, garbage, time-out). */
  onTlsClientError?: (err: Error) => void;
}

function listenPlain(transport: Transport, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    transport.server.once('error', onError);
    transport.server.listen({ host, port }, () => {
      transport.server.off('error', onError);
      const addr = transport.server.address();
      resolve(typeof addr === 'object' && addr ? addr.port : port);
    });
  });
}

export async function listenTransport(transport: Transport, host: string, port: number, opts: ListenOptions = {}): Promise<RunningWorker> {
  const plain = opts.plain !== false || !opts.tls;
  const bound = plain ? await listenPlain(transport, host, port) : 0;
  if (!opts.tls) return { port: bound, close: (how) => transport.close(how) };
  let secure: TlsListener;
  try {
    secure = await listenTls(transport, opts.tls, opts.onTlsClientError);
  } catch (err) {
    await transport.close();
    throw err;
  }
  return {
    port: bound,
    tlsPort: secure.port,
    reloadTls: () => secure.reload(),
    // Both listeners stop accepting at once; the transport drains every connection it holds.
    close: (how) => Promise.all([secure.close(), transport.close(how)]).then(() => undefined),
  };
}

/** SIGHUP: every TLS listener re-reads its certificate files; a failure keeps the old ones and is logged. */
export function reloadTlsListeners(listeners: readonly RunningWorker[], log: Pick<Logger, 'info' | 'error'>): void {
  for (const l of listeners) {
    if (!l.reloadTls) continue;
    try {
      l.reloadTls();
      log.info('TLS certificate reloaded', { tlsPort: l.tlsPort });
    } catch (err) {
      log.error(`TLS certificate reload failed, still using the previous one: ${(err as Error).message}`, { tlsPort: l.tlsPort });
    }
  }
}

/** ListenOptions from a worker's `tls` config section (none: plain only). */
export function tlsListenOptions(tls: WorkerTlsConfig | undefined, log: Pick<Logger, 'debug'>): ListenOptions {
  if (!tls) return {};
  const { only, ...listen } = tls;
  return {
    tls: listen,
    plain: !only,
    // Refused client certificates and scanners probing the port are routine: debug, not error.
    onTlsClientError: (err) => log.debug(`TLS handshake failed: ${err.message}`, { code: (err as { code?: string }).code }),
  };
}
