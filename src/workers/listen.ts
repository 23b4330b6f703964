// Binding a transport to host:port, the same way for every worker type. Under node:cluster
// the primary owns the socket and workers calling listen() share it.

import type { Transport } from '../http/server.js';

export interface RunningWorker {
  /** The bound port (useful when 0 was asked for). */
  port: number;
  close(): Promise<void>;
}

export function listenTransport(transport: Transport, host: string, port: number): Promise<RunningWorker> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    transport.server.once('error', onError);
    transport.server.listen({ host, port }, () => {
      transport.server.off('error', onError);
      const addr = transport.server.address();
      const bound = typeof addr === 'object' && addr ? addr.port : port;
      resolve({ port: bound, close: () => transport.close() });
    });
  });
}
