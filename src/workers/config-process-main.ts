// The short-lived process the supervisor checks its configuration in (config-process.ts): loads
// and checks the whole configuration with every module's code, sends back the part the
// supervisor keeps, and exits, taking that code and its memory with it.

import { isConfigError } from '../config/errors.js';
import { loadConfig } from '../config/load.js';
import { checkConfig } from './config-check.js';
import { loadServerModules } from './server-modules.js';
import { primaryPartOf } from './process-common.js';
import { CONFIG_REQUEST_ENV, type ConfigReply, type ConfigRequest } from './config-process.js';
import { installOperatorSignals } from './operator-signals.js';

// `systemctl kill --signal=SIGUSR1` reaches this process too while it runs (operator-signals.ts):
// from here on it neither opens Node's inspector nor ends the check.
installOperatorSignals();

async function answer(req: ConfigRequest): Promise<ConfigReply> {
  if (req.purpose === 'check') {
    const check = await checkConfig(req.dir);
    return { kind: 'check', errors: check.errors, notes: check.notes, ...(check.cfg ? primaryPartOf(check.cfg) : {}) };
  }
  try {
    // As `serve` has always loaded it before a listener opens: every file, the stores' paths, the
    // users' plugins (one that does not load is left out by each worker, not a start-up failure).
    const set = await loadServerModules(req.dir);
    const cfg = await loadConfig(req.dir, { modules: set.modules, runtime: true });
    return { kind: 'loaded', ...primaryPartOf(cfg) };
  } catch (err) {
    if (isConfigError(err)) return { kind: 'invalid', issues: [...err.issues] };
    return { kind: 'failed', message: (err as Error)?.message ?? String(err) };
  }
}

const reply = await answer(JSON.parse(process.env[CONFIG_REQUEST_ENV] ?? '{}') as ConfigRequest).catch((err: unknown): ConfigReply => ({ kind: 'failed', message: (err as Error)?.message ?? String(err) }));
// Exit once the answer is out: a module's setup may have left timers or store handles open.
process.send?.(reply, () => process.exit(0));
