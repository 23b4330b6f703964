// One attempt on one upstream host: build the leg, exchange it over the host's pool, open the
// reply. Shared by the master requests of a group and the copies sent to mirrors.

import type { KexKeypair } from '../../crypto/keypair.js';
import type { RelayRequest, RelayResponse } from '../relay-types.js';
import { AttemptError, HostPool } from '../upstreams/host-pool.js';
import { buildLeg, openLegReply } from '../upstreams/upstream-request.js';

export interface LegTarget {
  pool: HostPool;
  timeoutMs: number;
  keepalive: boolean;
  compression: boolean;
  settingsId?: string | undefined;
  key?: Uint8Array | undefined;
  clientKeypair?: KexKeypair | undefined;
  userAgent: string;
  maxReplyBytes: number;
}

export async function sendLeg(req: RelayRequest, t: LegTarget, signal?: AbortSignal): Promise<RelayResponse> {
  const where = t.pool.spec.name;
  let leg;
  try {
    leg = buildLeg(req, { hostHeader: where, keepAlive: t.keepalive, compression: t.compression, settingsId: t.settingsId, key: t.key, clientKeypair: t.clientKeypair, userAgent: t.userAgent });
  } catch (err) {
    // A key that makes no shared secret, a body zstd refuses: the same on every host.
    throw new AttemptError('failed', `cannot build the request for ${where}: ${(err as Error).message}`, { cause: err });
  }
  const res = await t.pool.exchange(leg.bytes, { timeoutMs: t.timeoutMs, maxReplyBytes: t.maxReplyBytes, keepAlive: t.keepalive, signal });
  const opened = openLegReply(res, leg, t.maxReplyBytes, where);
  return { ...opened, upstream: where };
}
