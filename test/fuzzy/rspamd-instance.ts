// A private Rspamd 3.4 for interop tests: a controller and a fuzzy storage worker on free
// loopback ports, a minimal config (only fuzzy_check, a 4-line TLD list so start-up takes a
// few seconds), stopped by PID. Never touches the system service.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync, chmodSync, mkdirSync } from 'node:fs';
import net from 'node:net';
import dgram from 'node:dgram';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const RSPAMD = '/usr/bin/rspamd';
export const haveRspamd = existsSync(RSPAMD);

export interface RspamdRule {
  name: string;
  servers: string;
  encryptionKey?: string;
  algorithm?: string;
  /** symbol → flag */
  map: Record<string, number>;
}

export interface RspamdInstance {
  controller: number;
  fuzzy: number;
  dir: string;
  stop(): Promise<void>;
}

export async function freeTcpPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

export async function freeUdpPort(): Promise<number> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
  const port = s.address().port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

function ruleConf(r: RspamdRule): string {
  const map = Object.entries(r.map).map(([sym, flag]) => `      ${sym} { max_score = 10.0; flag = ${flag}; }`).join('\n');
  return `  rule "${r.name}" {
    servers = "${r.servers}";
    symbol = "${r.name.toUpperCase()}_FUZZY_UNKNOWN";
    mime_types = ["*"];
    max_score = 10.0;
    read_only = no;
    skip_unknown = yes;
    ${r.algorithm ? `algorithm = "${r.algorithm}";` : ''}
    ${r.encryptionKey ? `encryption_key = "${r.encryptionKey}";` : ''}
    fuzzy_map = {
${map}
    }
  }`;
}

/** Start Rspamd; resolves once the controller answers /ping. */
export async function startRspamd(opts: { rules: RspamdRule[]; fuzzyKeypair?: { pubkey: string; privkey: string } }): Promise<RspamdInstance> {
  const dir = mkdtempSync(join(tmpdir(), 'mailsift-rspamd-'));
  for (const d of ['db', 'run', 'log', 'plugins']) mkdirSync(join(dir, d));
  const controller = await freeTcpPort();
  const fuzzy = await freeUdpPort();
  writeFileSync(join(dir, 'tld.dat'), 'com\norg\nnet\nexample\n');
  const kp = opts.fuzzyKeypair
    ? `keypair { pubkey = "${opts.fuzzyKeypair.pubkey}"; privkey = "${opts.fuzzyKeypair.privkey}"; type = "kex"; algorithm = "curve25519"; encoding = "base32"; }`
    : '';
  writeFileSync(join(dir, 'rspamd.conf'), `
options {
  pidfile = "${dir}/run/rspamd.pid";
  dns { nameserver = ["127.0.0.1:1"]; timeout = 0.2s; retransmits = 1; }
  url_tld = "${dir}/tld.dat";
  filters = "fuzzy_check";
  hs_cache_dir = "${dir}/db";
}
logging { type = "file"; filename = "${dir}/log/rspamd.log"; level = "info"; }
modules { path = "${dir}/plugins"; }
worker "fuzzy" {
  bind_socket = "127.0.0.1:${fuzzy}";
  count = 1;
  backend = "sqlite";
  hash_file = "${dir}/db/fuzzy.db";
  expire = 1d;
  sync = 1;
  allow_update = ["127.0.0.1"];
  ${kp}
}
worker "controller" {
  bind_socket = "127.0.0.1:${controller}";
  count = 1;
  secure_ip = "127.0.0.1";
}
fuzzy_check {
  min_bytes = 0;
  timeout = 1s;
  retransmits = 1;
${opts.rules.map(ruleConf).join('\n')}
}
`);
  chmodSync(dir, 0o777);
  for (const d of ['db', 'run', 'log']) chmodSync(join(dir, d), 0o777);
  // Its own process group: Rspamd's fuzzy worker ignores SIGTERM once the main process is gone,
  // so stop() ends the whole group (this instance only), never processes by name.
  const child: ChildProcess = spawn(RSPAMD, ['-f', '-i', '-c', join(dir, 'rspamd.conf')], { stdio: 'ignore', detached: true });
  const group = child.pid!;
  const signalGroup = (sig: NodeJS.Signals): void => {
    try {
      process.kill(-group, sig);
    } catch {
      // the group is already gone
    }
  };
  const stop = async (): Promise<void> => {
    if (child.exitCode === null) {
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      signalGroup('SIGTERM');
      const t = setTimeout(() => signalGroup('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    }
    signalGroup('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error('rspamd exited during start-up');
    }
    try {
      const r = await fetch(`http://127.0.0.1:${controller}/ping`);
      if (r.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error('rspamd did not start within 60 s');
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  return { controller, fuzzy, dir, stop };
}
