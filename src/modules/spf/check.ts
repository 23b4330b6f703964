import { loadSpf } from '../../module-helpers/mailauth-libs.js';
import type { Task } from '../../plugin-api/index.js';
import { AUTH_CACHE, skipAuth, trackedResolver } from '../../module-helpers/auth-results.js';
import type { AuthResultValue, SpfOutcome } from '../../module-helpers/auth-results.js';
import type { SpfConfig } from './config.js';
import { SPF_RESULT_SYMBOL } from './symbols.js';

export function makeSpfCheck(config: SpfConfig, hostname: string): (task: Task) => Promise<void> {
  return async (task) => {
    const ip = task.meta.ip;
    if (!ip || skipAuth(task, config)) return;
    const from = task.envelopeFrom;
    const helo = task.meta.helo;
    // The null sender is checked against the HELO name (RFC 7208 §2.4).
    const sender = from && from.address ? from.address : helo ? `postmaster@${helo}` : undefined;
    if (!sender) return;
    const resolver = trackedResolver(task);
    const { spf } = await loadSpf();
    const r = await spf({
      sender,
      ip,
      ...(helo ? { helo } : {}),
      mta: hostname,
      maxResolveCount: config.max_dns_requests,
      maxVoidCount: config.max_void_requests,
      resolver: resolver as never,
    });
    const result = r.status.result as AuthResultValue;
    const outcome: SpfOutcome = { result, domain: r.domain, info: r.info };
    if (typeof r.status.comment === 'string') outcome.comment = r.status.comment;
    task.cache.set(AUTH_CACHE.spf, outcome);
    const sym = SPF_RESULT_SYMBOL[result];
    if (sym) task.insert(sym, 1, r.domain);
  };
}
