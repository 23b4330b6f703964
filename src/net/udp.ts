// A UDP exchange with one peer, outside any task: send every datagram, collect the replies that
// `match` pairs with a datagram, re-send the unanswered ones on each time-out. The task form
// (task-udp.ts) runs this under the task's deadline and pending-event count; the controller's
// fuzzy endpoints, which serve no scan, call it directly.

import dgram from 'node:dgram';
import { isIP } from 'node:net';
import { NetError } from './scope.js';
import type { UdpRequest, UdpResult } from './types.js';

/**
 * Datagrams one exchange may carry. A fuzzy batch holds one command per hash of a message (a
 * few hundred at most); past this a caller is looping on hostile input.
 */
export const MAX_UDP_DATAGRAMS = 4096;
/** Largest payload of one IPv4 UDP datagram. */
export const MAX_UDP_PAYLOAD = 65_507;

/** `host` must already be an IP address; `attemptMs` bounds each attempt. Never rejects for network trouble. */
export function udpExchange(req: UdpRequest, host: string, attemptMs: number, signal?: AbortSignal): Promise<UdpResult> {
  const n = req.datagrams.length;
  if (n > MAX_UDP_DATAGRAMS) throw new NetError('NET_BAD_REQUEST', `udp: ${n} datagrams in one exchange (at most ${MAX_UDP_DATAGRAMS})`);
  if (req.datagrams.some((d) => d.length > MAX_UDP_PAYLOAD)) throw new NetError('NET_BAD_REQUEST', `udp: a datagram over ${MAX_UDP_PAYLOAD} bytes`);
  const replies: (Buffer | undefined)[] = new Array<Buffer | undefined>(n).fill(undefined);
  if (n === 0) return Promise.resolve({ replies, answered: 0 });
  const retransmits = Math.max(0, Math.floor(req.retransmits ?? 0));
  const sock = dgram.createSocket(isIP(host) === 6 ? 'udp6' : 'udp4');

  return new Promise<UdpResult>((resolve) => {
    let answered = 0;
    let attempts = 0;
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    const finish = (error?: string): void => {
      if (done) return;
      done = true;
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      try {
        sock.close();
      } catch {
        // already closed by a failed connect
      }
      resolve(error === undefined ? { replies, answered } : { replies, answered, error });
    };
    const onAbort = (): void => finish('aborted');
    const sendPending = (): void => {
      if (done) return;
      for (let i = 0; i < n; i++) {
        if (replies[i]) continue;
        try {
          // A send that fails later reaches the socket's 'error' (finish); the retransmit timer
          // covers a datagram that is lost.
          sock.send(req.datagrams[i]!);
        } catch (e) {
          // dgram throws at once on a socket without a peer or already closed: nothing can be sent.
          return finish(`send failed: ${(e as Error).message}`);
        }
      }
      timer = setTimeout(() => {
        if (++attempts > retransmits) finish();
        else sendPending();
      }, attemptMs);
    };
    sock.on('message', (msg) => {
      const i = req.match(msg);
      if (i === undefined || !Number.isInteger(i) || i < 0 || i >= n || replies[i]) return;
      replies[i] = msg;
      if (++answered === n) finish();
    });
    sock.on('error', (e) => finish(`socket error: ${e.message}`));
    if (signal?.aborted) return finish('aborted');
    signal?.addEventListener('abort', onAbort);
    // Connected: only this peer's datagrams reach the socket.
    sock.connect(req.port, host, (err?: Error) => (err ? finish(`connect failed: ${err.message}`) : sendPending()));
  });
}

/**
 * A transport for exchanges that serve no scan (the controller's fuzzy endpoints): the host name
 * is looked up by the system, and each attempt waits the request's own timeout (default 1 s).
 */
export function untaskedUdp(signal?: AbortSignal): (req: UdpRequest) => Promise<UdpResult> {
  return (req) => udpExchange(req, req.host, Math.max(1, (req.timeout ?? 1) * 1000), signal);
}
