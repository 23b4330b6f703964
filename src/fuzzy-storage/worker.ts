// The `fuzzy` worker role: the storage server configured by `workers.fuzzy`, on the process's
// FuzzyStore. The supervisor starts it as one more role (never shared by node:cluster: UDP).
import type { Logger } from '../core/logger.js';
import type { FuzzyStore } from '../storage/types.js';
import { startFuzzyServer, type FuzzyServer } from './storage-server.js';
import type { FuzzyWorkerConfig } from './worker-config.js';

/** `storeExpire`: the store's configured lifetime, used when the worker sets none. */
/** `checkStore`: the store's scan view, for CHECK (scanners wait for its answer); `store` when absent. */
export async function startFuzzyWorker(cfg: FuzzyWorkerConfig, store: FuzzyStore, log: Logger, storeExpire?: number, checkStore?: FuzzyStore): Promise<FuzzyServer & { port: number }> {
  const expire = cfg.expire ?? storeExpire;
  const keypairs = cfg.keypair === undefined ? [] : Array.isArray(cfg.keypair) ? cfg.keypair : [cfg.keypair];
  const srv = await startFuzzyServer({
    store,
    ...(checkStore ? { checkStore } : {}),
    bind: cfg.bind,
    keypairs,
    encryptedOnly: cfg.encrypted_only,
    allowUpdate: cfg.allow_update,
    readOnly: cfg.read_only,
    ...(expire !== undefined ? { expireSeconds: expire } : {}),
    skipHashes: cfg.skip_hashes,
    log,
  });
  log.info(`fuzzy storage listening on udp ${srv.address.host}:${srv.address.port}`, { worker: 'fuzzy', port: srv.address.port, encrypted: keypairs.length > 0 });
  return Object.assign(srv, { port: srv.address.port });
}
