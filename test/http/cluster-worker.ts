// Child process for cluster.test.ts: a cluster worker running both worker types on ports the
// primary chose (0 = shared random port), reporting the bound ports and its pid.

import { startControllerWorker } from '../../src/workers/controller.js';
import { startNormalWorker } from '../../src/workers/normal.js';
import type { Scanner } from '../../src/engine/contract.js';
import { loadConfig } from '../../src/config/load.js';
import { createEngine } from '../../src/engine/index.js';
import { builtinModules } from '../../src/modules/index.js';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const cfg = await loadConfig('conf');
const scanner: Scanner = await createEngine(cfg.engine, builtinModules);
const normal = await startNormalWorker({ host: '127.0.0.1', port: Number(process.env.NORMAL_PORT ?? 0), scanner, log: quiet });
const controller = await startControllerWorker({ host: '127.0.0.1', port: Number(process.env.CONTROLLER_PORT ?? 0), log: quiet });
process.send?.({ normal: normal.port, controller: controller.port, pid: process.pid });
process.on('message', async (m) => {
  if (m === 'stop') {
    await Promise.all([normal.close(), controller.close()]);
    process.exit(0);
  }
});
