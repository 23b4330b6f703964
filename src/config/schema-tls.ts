// `workers.<name>.tls`: an HTTPS listener next to (or instead of) the plain one. Paths are
// relative to the configuration directory; the files are read when the worker starts and
// again on SIGHUP (see src/http/tls.ts).

import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { createSecureContext } from 'node:tls';
import { z } from 'zod';
import type { TlsListenOptions } from '../http/tls.js';
import { parseBind } from '../core/config-values.js';

const TlsBind = z.unknown().transform((v, ctx) => {
  const out = parseBind(v);
  if (out === undefined) {
    ctx.issues.push({ code: 'custom', message: 'an address "host:port" (e.g. "127.0.0.1:11335", "[::1]:11335", "*:11335")', input: v });
    return z.NEVER;
  }
  return out;
});

export const TlsListen = z
  .strictObject({
    /** Where the HTTPS listener binds. */
    bind: TlsBind,
    /** PEM certificate chain (server certificate first). */
    cert: z.string().min(1),
    /** PEM private key of the certificate. */
    key: z.string().min(1),
    /** PEM CA bundle: client certificates are requested and verified against it. */
    ca: z.string().min(1).optional(),
    /** Refuse clients without a certificate signed by `ca`. */
    require_client_cert: z.boolean().default(false),
    /** Serve HTTPS only: no plain listener on the worker's `bind`. */
    only: z.boolean().default(false),
  })
  .superRefine((t, ctx) => {
    if (t.require_client_cert && t.ca === undefined) {
      ctx.addIssue({ code: 'custom', path: ['ca'], message: 'a CA file to check client certificates against (require_client_cert is true)', input: undefined });
    }
  });

export type TlsListenValue = z.output<typeof TlsListen>;

/** The keys this file adds to every worker section. */
export const WorkerTlsKeys = {
  /** HTTPS listener of the worker. */
  tls: TlsListen.optional(),
};

/** Runtime form: what the HTTPS listener takes (paths absolute), plus `only`. */
export interface WorkerTlsConfig extends TlsListenOptions {
  /** No plain listener on the worker's `bind`. */
  only: boolean;
}

export interface TlsFileProblem {
  /** Key under `workers.<name>.tls`. */
  key: 'cert' | 'key' | 'ca';
  path: string;
  expected: string;
  /** What is wrong, with the path. */
  found: string;
}

function fileProblem(path: string): string | undefined {
  try {
    if (!statSync(path).isFile()) return 'not a file';
    accessSync(path, constants.R_OK);
    return undefined;
  } catch (err) {
    const code = (err as { code?: string }).code;
    return code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'a file this process cannot read' : String((err as Error).message);
  }
}

/** Resolves paths against the config directory and checks the files can be read. */
export function workerTls(t: TlsListenValue | undefined, confDir: string): { tls?: WorkerTlsConfig; problems: TlsFileProblem[] } {
  if (!t) return { problems: [] };
  const tls: WorkerTlsConfig = {
    host: t.bind.host,
    port: t.bind.port,
    certFile: resolve(confDir, t.cert),
    keyFile: resolve(confDir, t.key),
    ...(t.ca !== undefined ? { caFile: resolve(confDir, t.ca) } : {}),
    requireClientCert: t.require_client_cert,
    only: t.only,
  };
  const problems: TlsFileProblem[] = [];
  for (const [key, path] of [['cert', tls.certFile], ['key', tls.keyFile], ['ca', tls.caFile]] as const) {
    const found = path === undefined ? undefined : fileProblem(path);
    if (found !== undefined && path !== undefined) problems.push({ key, path, expected: 'a readable PEM file', found: `${found} (${path})` });
  }
  if (problems.length === 0) {
    // Bad PEM or a key that does not belong to the certificate: caught by configtest, not at the first start.
    try {
      createSecureContext({ cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile), ...(tls.caFile ? { ca: readFileSync(tls.caFile) } : {}) });
    } catch (err) {
      problems.push({ key: 'cert', path: tls.certFile, expected: 'a PEM certificate (and CA bundle) usable with the key', found: `${(err as Error).message} (${tls.certFile}, ${tls.keyFile})` });
    }
  }
  return { tls, problems };
}
