// PLACEHOLDER, replaced by the milter engineer's server (proxy-milter.md §4): the proxy worker
// (src/workers/proxy.ts) hands every connection accepted on a `milter: true` listener to this
// function, with the relay that answers scans (upstream groups or self-scan) and the resolved
// config (`config.milter` holds spam_header, reject_message, … and the known actions).

import type net from 'node:net';
import type { Logger } from '../../plugin-api/index.js';
import type { ProxyRuntimeConfig } from '../config.js';
import type { ScanRelay } from '../relay-types.js';

export function handleMilterConnection(socket: net.Socket, ctx: { relay: ScanRelay; config: ProxyRuntimeConfig; log: Logger }): void {
  ctx.log.warn('milter connection closed: the milter front end is not built yet', { peer: socket.remoteAddress ?? 'unix' });
  socket.destroy();
}
