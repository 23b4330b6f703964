// The proxy worker: listens on every `bind` of workers.proxy (TCP and unix
// sockets) and speaks HTTP (the scan protocol and the legacy lines, relayed) or milter there;
// either way scans go through one ProxyRelay (upstream groups, mirrors, self-scan). The
// supervisor starts it like the other roles (src/workers/supervisor.ts).

import { chmodSync } from 'node:fs';
import net from 'node:net';
import { createHttpCrypt } from '../http/crypt/index.js';
import { createTransport, type Transport } from '../http/server.js';
import type { Handler } from '../http/types.js';
import type { Logger } from '../plugin-api/index.js';
import { renderLegacyError } from '../protocol/legacy-command.js';
import type { ProxyBind, ProxyRuntimeConfig } from '../proxy/config.js';
import { createProxyHttpHandler } from '../proxy/http-front.js';
import { handleMilterConnection, type MilterContext, type MilterSession } from '../proxy/milter/index.js';
import { ProxyRelay, type ProxyRelayOptions } from '../proxy/relay/proxy-relay.js';
import type { RunningWorker } from './listen.js';
import { removeStaleSocket } from './proxy-socket.js';

/** Time milter sessions get to finish after the worker stops accepting, before their sockets are closed. */
const MILTER_CLOSE_GRACE_MS = 5_000;
/**
 * Mode of unix sockets the proxy creates: any local user may connect, the same reach as a
 * loopback TCP port (an MTA such as Postfix runs as its own user and needs write access).
 */
const UNIX_SOCKET_MODE = 0o666;

export interface ProxyWorkerOptions {
  config: ProxyRuntimeConfig;
  log: Logger;
  /** The in-process scan route table, when the proxy self-scans (createNormalHandler over its own engine). */
  selfScan?: Handler;
  serverName?: string;
  /** Called for every accepted connection (the `connections` counter). */
  onConnection?: () => void;
  /**
   * Remove a unix socket file nobody listens on before binding it (a previous run's). Under
   * node:cluster the supervisor does it once, before any worker binds.
   */
  removeStaleSockets?: boolean;
  /** Relay tuning for tests (time, randomness, pools, the mirror compare hook). */
  relay?: Omit<ProxyRelayOptions, 'config' | 'log' | 'selfScan'>;
}

export interface ProxyWorkerHandle extends RunningWorker {
  /** What each bind listens on, in order: `host:port` with the bound port, or the socket path. */
  addresses: string[];
  relay: ProxyRelay;
}

/** `host:port` with IPv6 hosts bracketed. */
function tcpText(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

function listenOne(server: net.Server, bind: ProxyBind): Promise<string> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    const done = (): void => {
      server.off('error', onError);
      if (bind.kind === 'unix') {
        try {
          chmodSync(bind.path, UNIX_SOCKET_MODE);
        } catch {
          // Under node:cluster the primary made the file; it has the mode the primary gave it.
        }
        resolve(bind.path);
        return;
      }
      const a = server.address();
      resolve(tcpText(bind.host, typeof a === 'object' && a ? a.port : bind.port));
    };
    if (bind.kind === 'unix') server.listen({ path: bind.path }, done);
    else server.listen({ host: bind.host, port: bind.port }, done);
  });
}

export async function startProxyWorker(o: ProxyWorkerOptions): Promise<ProxyWorkerHandle> {
  const cfg = o.config;
  const relay = new ProxyRelay({ config: cfg, log: o.log, ...(o.selfScan ? { selfScan: o.selfScan } : {}), ...o.relay });
  let transport: Transport | undefined;
  const milterSockets = new Set<net.Socket>();
  const milterSessions = new Set<MilterSession>();
  let accept: (socket: net.Socket) => void;
  if (cfg.mode === 'http') {
    const t = createTransport(createProxyHttpHandler({ relay, log: o.log, legacyCompat: cfg.legacyCompat, maxMessage: cfg.maxMessage }), {
      maxBodyBytes: cfg.maxMessage,
      requestTimeoutMs: cfg.timeoutMs,
      ...(o.serverName ? { serverName: o.serverName } : {}),
      onUnknownError: (err) => o.log.error('proxy transport error', { err: String((err as Error)?.stack ?? err) }),
      // A legacy request that fails before the handler (a malformed head, a body too large) is
      // answered with its dialect's status line, as on the normal worker.
      legacyError: (dialect, err) => {
        o.log.info('legacy request refused', { dialect, err: String((err as Error)?.message ?? err) });
        return renderLegacyError(dialect, err);
      },
      crypt: createHttpCrypt(cfg.keypair ? { keypair: cfg.keypair, encryptedOnly: cfg.encryptedOnly } : undefined, o.log),
    });
    transport = t;
    // Every listener feeds the one transport, which counts and drains its connections.
    accept = (socket) => t.server.emit('connection', socket);
  } else {
    const ctx: MilterContext = { relay, config: cfg.milter, log: o.log };
    accept = (socket) => {
      milterSockets.add(socket);
      socket.once('close', () => milterSockets.delete(socket));
      // A session that does not handle its socket's errors must not take the worker down.
      socket.on('error', (err) => o.log.debug(`milter connection error: ${err.message}`));
      try {
        const session = handleMilterConnection(socket, ctx);
        if (session) {
          milterSessions.add(session);
          socket.once('close', () => milterSessions.delete(session));
        }
      } catch (err) {
        o.log.error(`milter session failed to start: ${(err as Error).message}`, { err: String((err as Error).stack ?? err) });
        socket.destroy();
      }
    };
  }
  const servers: net.Server[] = [];
  const addresses: string[] = [];
  try {
    for (const bind of cfg.listen) {
      if (bind.kind === 'unix' && o.removeStaleSockets !== false) await removeStaleSocket(bind.path);
      const server = net.createServer({ allowHalfOpen: cfg.mode === 'http', noDelay: true }, (socket) => {
        o.onConnection?.();
        accept(socket);
      });
      servers.push(server);
      addresses.push(await listenOne(server, bind));
    }
  } catch (err) {
    for (const s of servers) s.close();
    relay.close();
    throw err;
  }
  const firstTcp = addresses.find((_, i) => cfg.listen[i]!.kind === 'tcp');
  const port = firstTcp ? Number(firstTcp.slice(firstTcp.lastIndexOf(':') + 1)) : 0;
  return {
    port,
    addresses,
    relay,
    async close() {
      // A server's close() waits for the connections it accepted, which the transport or the
      // milter sessions end: stop accepting first, end them, then wait.
      const stopped = Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
      if (transport) await transport.close();
      if (milterSockets.size > 0) {
        // Each session finishes the scan it is waiting for (the MTA gets that verdict), then closes.
        for (const s of milterSessions) s.shutdown();
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, MILTER_CLOSE_GRACE_MS);
          t.unref();
          const check = (): void => {
            if (milterSockets.size === 0) {
              clearTimeout(t);
              resolve();
            }
          };
          for (const s of milterSockets) s.once('close', check);
        });
        for (const s of milterSockets) s.destroy();
      }
      await stopped;
      relay.close();
    },
  };
}
