import { runContract } from './contract.js';
import { openRedis, REDIS_PORT, REDIS_URL_HOST } from './helpers.js';

// The real Redis on 127.0.0.1:6379 (CI starts one), under a key prefix of this run's own.
runContract('redis', () => openRedis({ seeds: [{ host: REDIS_URL_HOST, port: REDIS_PORT }], cluster: false, tag: 'contract' }));
