// The ways `npm run bench` reaches mailsift's scanners (--via): `direct` (the client talks to
// the normal workers' /checkv2), `proxy` (the client talks HTTP to a proxy worker, which relays
// to those same normal workers) and `milter` (the client talks milter to a proxy worker in
// milter mode, which relays the same way). All three share one set of normal workers, so their
// scan work is the same and the differences are the relay's.
//
// A mailsift speaks one mode on all of its proxy's listeners, so the milter proxy runs in a
// second `mailsift serve` beside the first: that one's own normal worker is never sent a
// message, and its CPU and memory are left out (see MailsiftVias.pids).
import { join } from 'node:path';
import { freePort, startMailsift, waitForPing, type BenchConf, type MailsiftStartOptions, type RunningServer } from './servers.js';
import { parentPid, processRole, processTree } from './proc-stats.js';

export const VIAS = ['direct', 'proxy', 'milter'] as const;
export type Via = (typeof VIAS)[number];

export function parseVias(list: string): Via[] {
  const out: Via[] = [];
  for (const v of list.split(',').map((s) => s.trim()).filter(Boolean)) {
    if (!(VIAS as readonly string[]).includes(v)) throw new Error(`--via: expected a list of ${VIAS.join(', ')}; found "${v}"`);
    if (!out.includes(v as Via)) out.push(v as Via);
  }
  if (out.length === 0) throw new Error(`--via: expected at least one of ${VIAS.join(', ')}`);
  return out;
}

export interface MailsiftVias {
  /** Where each requested via's client connects (host:port). */
  address: Partial<Record<Via, string>>;
  /**
   * Every mailsift process that counts for CPU and memory: the first server's whole tree (its
   * normal workers, controller and HTTP proxy) and the milter server's supervisor and proxy.
   * The same set for every via, so an idle proxy costs every via the same (next to nothing).
   */
  pids(): number[];
  /** The proxy workers among them (HTTP and milter): the relays' own share of pids(). */
  relayPids(): number[];
  /** What a process of pids() is (`normal`, `controller`, …; the milter server's with a `milter ` prefix). */
  roleOf(pid: number): string;
  /** The first server (its `scan` is the direct address). */
  main: RunningServer;
  stop(): Promise<void>;
}

/** `workers.proxy` relaying everything to one scanner address. */
function proxySection(bind: string, upstream: string, milter: boolean): Record<string, unknown> {
  return {
    enabled: true,
    bind,
    count: 1,
    milter,
    upstreams: { scan: { hosts: upstream, default: true } },
  };
}

async function waitForProxy(address: string, server: RunningServer): Promise<void> {
  await waitForPing(address, undefined, () => `the proxy on ${address} of the server on ${server.scan} did not answer`);
}

/** Starts the servers the requested vias need; `workers` normal workers scan for all of them. */
export async function startMailsiftVias(root: string, workers: number, vias: readonly Via[], extra: MailsiftStartOptions = {}): Promise<MailsiftVias> {
  const httpProxy = vias.includes('proxy') ? `127.0.0.1:${await freePort()}` : undefined;
  const main = await startMailsift(root, workers, {
    ...extra,
    patchConf: async (conf: BenchConf, confDir: string) => {
      await extra.patchConf?.(conf, confDir);
      if (!httpProxy) return;
      conf.workers!.proxy = proxySection(httpProxy, String(conf.workers!.normal!.bind), false);
    },
  });
  const servers: RunningServer[] = [main];
  const stop = async (): Promise<void> => {
    for (const s of servers.reverse()) await s.stop();
  };
  try {
    if (httpProxy) await waitForProxy(httpProxy, main);
    let milterAddress: string | undefined;
    if (vias.includes('milter')) {
      const bind = `127.0.0.1:${await freePort()}`;
      const milter = await startMailsift(root, 1, {
        ...(extra.dns ? { dns: extra.dns } : {}),
        patchConf: (conf: BenchConf, confDir: string) => {
          conf.workers!.controller = { ...(conf.workers!.controller ?? {}), enabled: false };
          conf.workers!.proxy = proxySection(bind, main.scan, true);
          // Its own stores: the idle normal worker must not share the first server's files.
          conf.data_dir = join(confDir, 'data');
        },
      });
      servers.push(milter);
      // The milter port answers an HTTP /ping (proxy-milter.md §4.1), once the proxy listens.
      await waitForProxy(bind, milter);
      milterAddress = bind;
    }
    const milterServer = servers[1];
    const pids = (): number[] => {
      const out = processTree(main.pids());
      if (milterServer) {
        const sup = milterServer.pids()[0]!;
        out.push(...processTree([sup]).filter((p) => processRole(p, sup) !== 'normal'));
      }
      return out;
    };
    const relayPids = (): number[] => {
      const sups = servers.map((s) => s.pids()[0]!);
      return pids().filter((p) => sups.some((sup) => processRole(p, sup) === 'proxy'));
    };
    const mainSup = main.pids()[0]!;
    const roleOf = (pid: number): string => {
      const sup = milterServer?.pids()[0];
      // The milter server's workers are its supervisor's children (cluster forks).
      if (sup !== undefined && (pid === sup || parentPid(pid) === sup)) return `milter ${processRole(pid, sup)}`;
      return processRole(pid, mainSup);
    };
    return {
      relayPids,
      roleOf,
      address: {
        ...(vias.includes('direct') ? { direct: main.scan } : {}),
        ...(httpProxy ? { proxy: httpProxy } : {}),
        ...(milterAddress ? { milter: milterAddress } : {}),
      },
      pids,
      main,
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
