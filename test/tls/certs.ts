// Test PKI made with the real openssl CLI: a CA, two server certificates for 127.0.0.1 (to
// swap on reload), a client certificate from the CA and one from an unrelated ("rogue") CA.
// EC P-256 keys keep generation to a few tens of milliseconds per certificate.

import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CA_SUBJECT = '/O=mailsift tests/CN=Mail Test CA';
/** The issuer of certificates signed by the test CA, as RFC 2253 (what TLS-Cert-Issuer carries). */
export const CA_ISSUER_RFC2253 = 'CN=Mail Test CA,O=mailsift tests';

export interface TestPki {
  dir: string;
  caCert: string;
  /** Server certificate and key files, CN=server-one and CN=server-two. */
  server1: { cert: string; key: string };
  server2: { cert: string; key: string };
  /** Client certificate signed by the test CA (CN=mta.example). */
  client: { cert: string; key: string };
  /** Client certificate signed by a CA the server does not trust. */
  rogueClient: { cert: string; key: string };
  remove(): Promise<void>;
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

function makeCa(dir: string, name: string, subject: string): void {
  openssl(['req', '-x509', ...EC, '-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', '2', '-subj', subject,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir);
}

function makeLeaf(dir: string, name: string, ca: string, subject: string, ext: string): void {
  openssl(['req', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject], dir);
  openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial',
    '-out', `${name}.crt`, '-days', '2', '-extfile', ext], dir);
}

export async function makeTestPki(): Promise<TestPki> {
  const dir = await mkdtemp(join(tmpdir(), 'mailsift-tls-'));
  await writeFile(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  await writeFile(join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
  makeCa(dir, 'ca', CA_SUBJECT);
  makeCa(dir, 'rogue-ca', '/O=elsewhere/CN=Rogue CA');
  makeLeaf(dir, 'server1', 'ca', '/CN=server-one', 'server.ext');
  makeLeaf(dir, 'server2', 'ca', '/CN=server-two', 'server.ext');
  makeLeaf(dir, 'client', 'ca', '/CN=mta.example', 'client.ext');
  makeLeaf(dir, 'rogue-client', 'rogue-ca', '/CN=mta.example', 'client.ext');
  const pair = (n: string) => ({ cert: join(dir, `${n}.crt`), key: join(dir, `${n}.key`) });
  return {
    dir,
    caCert: join(dir, 'ca.crt'),
    server1: pair('server1'),
    server2: pair('server2'),
    client: pair('client'),
    rogueClient: pair('rogue-client'),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}
