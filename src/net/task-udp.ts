// UDP exchanges of one task: the host name goes through the worker's resolver, each attempt is
// bounded by the call's timeout, the task deadline ends the exchange, and the exchange counts
// as a pending event of the symbol that started it, as every other network call does.

import { resolveHost } from './task-tcp.js';
import { callBudget, dispatch } from './scope.js';
import type { NetScope } from './scope.js';
import type { TaskUdp, UdpRequest, UdpResult } from './types.js';
import { udpExchange } from './udp.js';

/** Seconds one attempt waits when the request names no timeout (Rspamd's fuzzy_check default). */
export const DEFAULT_UDP_TIMEOUT = 1;

export class TaskUdpImpl implements TaskUdp {
  constructor(private readonly scope: NetScope) {}

  exchange(req: UdpRequest): Promise<UdpResult> {
    const scope = this.scope;
    const op = async (): Promise<UdpResult> => {
      let host: string;
      try {
        host = await resolveHost(scope, req.host);
      } catch (e) {
        return { replies: req.datagrams.map(() => undefined), answered: 0, error: (e as Error).message };
      }
      return udpExchange(req, host, callBudget(scope, req.timeout, DEFAULT_UDP_TIMEOUT), scope.signal);
    };
    return dispatch(scope, 'udp', undefined, op, () => {}) as Promise<UdpResult>;
  }
}
