// A private Rspamd 3.4 for the encryption interop tests: a minimal configuration (no rule
// modules, so it starts in about two seconds), a normal worker and a controller on free loopback
// ports, both with the given keypair (test/helpers/real-rspamd.ts runs it).
import { freePort, RSPAMD, startRspamd } from '../helpers/real-rspamd.js';

export { RSPAMD };

export interface RealRspamd {
  normalPort: number;
  controllerPort: number;
  pid: number;
  log(): Promise<string>;
  stop(): Promise<void>;
}

export async function startRealRspamd(keypair: { pubkey: string; privkey: string }): Promise<RealRspamd> {
  const [normalPort, controllerPort] = [await freePort(), await freePort()];
  const kp = `keypair { pubkey = "${keypair.pubkey}"; privkey = "${keypair.privkey}"; }`;
  const r = await startRspamd({
    workers: [
      `worker "normal" { bind_socket = "127.0.0.1:${normalPort}"; count = 1; ${kp} }`,
      `worker "controller" { bind_socket = "127.0.0.1:${controllerPort}"; count = 1; secure_ip = "127.0.0.1"; ${kp} }`,
    ],
    ports: [normalPort, controllerPort],
  });
  return { normalPort, controllerPort, pid: r.pid, log: r.log, stop: r.stop };
}
