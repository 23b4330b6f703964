// Engines for the network tests: a module built from test callbacks, and the worker's network
// services pointed at the loopback DNS server (closed by the test).

import { createEngine } from '../../src/engine/index.js';
import type { Engine } from '../../src/engine/index.js';
import { defineModule } from '../../src/plugin-api/index.js';
import type { Logger, SymbolRegistration } from '../../src/plugin-api/index.js';
import { createNetServices } from '../../src/net/index.js';
import type { NetServices } from '../../src/net/index.js';
import { baseConfig, meta } from '../engine/helpers.js';
import type { EngineConfig } from '../../src/engine/contract.js';

export { meta };

export interface NetEngine {
  engine: Engine;
  net: NetServices;
}

export async function netEngine(regs: SymbolRegistration[], dnsServer: string, over: Partial<EngineConfig> = {}, symbols: Record<string, { score: number }> = {}, log?: Logger): Promise<NetEngine> {
  const mod = defineModule({
    name: 'net_test',
    symbols,
    setup(ctx) {
      for (const r of regs) ctx.symbol(r);
    },
  });
  const net = createNetServices({ dns: { servers: [dnsServer], timeout: 0.3, retransmits: 1, ...(over.dns?.maxRequests !== undefined ? { maxRequests: over.dns.maxRequests } : {}) } });
  const engine = await createEngine(baseConfig(over), [mod], { net, ...(log ? { log } : {}) });
  return { engine, net };
}

export const MSG = Buffer.from('From: a@example.org\r\nTo: b@example.net\r\nSubject: t\r\nMessage-ID: <1@example.org>\r\n\r\nhello\r\n');
