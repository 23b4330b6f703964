// A private Postfix instance for tests (Debian's `postfix` package, installed by .ci/run with
// its own service kept from starting): its own config, queue and data directories under one
// temporary directory, smtpd on a loopback port, the milters it is given, and every message
// delivered over LMTP to a port the test listens on. Postfix's master runs as root and its
// daemons as the package's `postfix` user, as on a mail server; nothing is chrooted.

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const POSTFIX = '/usr/sbin/postfix';

/** Why a Postfix test cannot run here, or false. */
export function postfixUnavailable(): string | false {
  if (!existsSync(POSTFIX)) return 'postfix not installed (apt-get install postfix; .ci/run does)';
  if (userInfo().uid !== 0) return 'postfix needs root to start its master (the tests run as root in CI)';
  return false;
}

export interface PostfixOptions {
  /** `smtpd_milters`, e.g. `inet:127.0.0.1:11332` or `unix:/path/milter.sock`. */
  milters: string;
  /** Port of the LMTP server every message is delivered to. */
  lmtpPort: number;
  /** A second smtpd listener (`secondPort`) whose smtpd_milters are these. */
  secondMilters?: string;
  /** More main.cf lines (`name = value`). */
  main?: Record<string, string>;
}

export interface PostfixInstance {
  /** smtpd's port on 127.0.0.1. */
  port: number;
  /** The second smtpd's port (with `secondMilters`), else undefined. */
  secondPort?: number;
  dir: string;
  /** Postfix's own log (maillog_file), for failure messages. */
  log(): Promise<string>;
  /** `postfix stop`, then the directory is removed. Safe to call twice. */
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen({ host: '127.0.0.1', port: 0 }, () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** The daemons a delivering instance needs (master.cf(5)); chroot off: no copies of /etc inside. */
function masterCf(port: number, second?: { port: number; milters: string }): string {
  return [
    `127.0.0.1:${port} inet n - n - - smtpd`,
    ...(second ? [`127.0.0.1:${second.port} inet n - n - - smtpd`, `  -o smtpd_milters=${second.milters}`] : []),
    'pickup    unix  n - n 60 1 pickup',
    'cleanup   unix  n - n -  0 cleanup',
    'qmgr      unix  n - n 300 1 qmgr',
    'rewrite   unix  - - n -  - trivial-rewrite',
    'bounce    unix  - - n -  0 bounce',
    'defer     unix  - - n -  0 bounce',
    'trace     unix  - - n -  0 bounce',
    'verify    unix  - - n -  1 verify',
    'flush     unix  n - n 1000? 0 flush',
    'proxymap  unix  - - n -  - proxymap',
    'showq     unix  n - n -  - showq',
    'error     unix  - - n -  - error',
    'retry     unix  - - n -  - error',
    'discard   unix  - - n -  - discard',
    'lmtp      unix  - - n -  - lmtp',
    'anvil     unix  - - n -  1 anvil',
    'scache    unix  - - n -  1 scache',
    'postlog   unix-dgram n - n - 1 postlogd',
    '',
  ].join('\n');
}

/** Waits until smtpd answers with its banner (master starts the listener at once; be patient). */
async function waitForBanner(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const got = await new Promise<string>((resolve) => {
      const s = net.connect({ host: '127.0.0.1', port });
      let text = '';
      const done = (v: string): void => {
        s.destroy();
        resolve(v);
      };
      s.setTimeout(5_000, () => done(`timeout: ${text}`));
      s.on('data', (d) => {
        text += d.toString('latin1');
        if (text.includes('\r\n')) done(text);
      });
      s.on('error', (e) => done(`error: ${e.message}`));
    });
    if (got.startsWith('220 ')) return;
    last = got;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`postfix smtpd on ${port} did not answer: ${last}`);
}

export async function startPostfix(o: PostfixOptions): Promise<PostfixInstance> {
  const dir = await mkdtemp(join(tmpdir(), 'mailsift-postfix-'));
  // Postfix wants its directories reachable by the postfix user and not writable by others.
  await chmod(dir, 0o755);
  const conf = join(dir, 'etc');
  await mkdir(conf);
  await mkdir(join(dir, 'spool'));
  await mkdir(join(dir, 'data'));
  // The master takes its lock in data_directory as mail_owner.
  await run('chown', ['postfix:postfix', join(dir, 'data')]);
  const port = await freePort();
  const second = o.secondMilters !== undefined ? { port: await freePort(), milters: o.secondMilters } : undefined;
  const main: Record<string, string> = {
    compatibility_level: '3.6',
    config_directory: conf,
    queue_directory: join(dir, 'spool'),
    data_directory: join(dir, 'data'),
    meta_directory: '/etc/postfix',
    mail_owner: 'postfix',
    setgid_group: 'postdrop',
    myhostname: 'mx.test.local',
    mydomain: 'test.local',
    myorigin: '$myhostname',
    inet_interfaces: '127.0.0.1',
    inet_protocols: 'ipv4',
    mydestination: '',
    mynetworks: '127.0.0.0/8',
    relay_domains: '',
    // Every message, whatever its recipient, goes to the test's LMTP sink.
    default_transport: `lmtp:inet:127.0.0.1:${o.lmtpPort}`,
    relay_transport: `lmtp:inet:127.0.0.1:${o.lmtpPort}`,
    local_transport: `lmtp:inet:127.0.0.1:${o.lmtpPort}`,
    alias_maps: '',
    alias_database: '',
    local_recipient_maps: '',
    smtpd_recipient_restrictions: 'permit_mynetworks, reject',
    smtpd_milters: o.milters,
    non_smtpd_milters: '',
    milter_protocol: '6',
    milter_default_action: 'tempfail',
    // A scan on a loaded machine may take seconds; Postfix's default (300 s) is fine, kept explicit.
    milter_content_timeout: '300s',
    // Logged to a file: the sandbox has no syslog socket. Postfix wants the path pre-approved.
    maillog_file: join(dir, 'maillog'),
    maillog_file_prefixes: dir,
    smtpd_banner: '$myhostname ESMTP',
    biff: 'no',
    smtputf8_enable: 'no',
    smtp_dns_support_level: 'disabled',
    lmtp_dns_support_level: 'disabled',
    // The sink is on loopback: no connection caching or back-off games between test messages.
    lmtp_connection_cache_on_demand: 'no',
    ...o.main,
  };
  await writeFile(join(conf, 'main.cf'), Object.entries(main).map(([k, v]) => `${k} = ${v}`).join('\n') + '\n');
  await writeFile(join(conf, 'master.cf'), masterCf(port, second));
  const instance: PostfixInstance = {
    port,
    ...(second ? { secondPort: second.port } : {}),
    dir,
    log: () => readFile(join(dir, 'maillog'), 'utf8').catch(() => ''),
    stop: async () => {
      if (!existsSync(conf)) return;
      // `stop` asks the master to end its daemons; `abort` if it does not answer.
      await run(POSTFIX, ['-c', conf, 'stop']).catch(() => run(POSTFIX, ['-c', conf, 'abort']).catch(() => undefined));
      await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    // `postfix start` runs `postfix check` first, which creates the queue's subdirectories
    // with their owners and modes (post-install create-missing).
    await run(POSTFIX, ['-c', conf, 'start'], { timeout: 60_000 });
    await waitForBanner(port, 60_000);
    if (second) await waitForBanner(second.port, 60_000);
  } catch (err) {
    // Postfix says why only on a terminal or in its log: hand both over.
    const out = err as { stderr?: string; stdout?: string };
    const log = `${out.stdout ?? ''}${out.stderr ?? ''}${await instance.log()}`;
    await instance.stop();
    throw new Error(`postfix did not start: ${(err as Error).message}\n${log}`);
  }
  return instance;
}
