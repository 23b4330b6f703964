// Native HTTPS for any worker: a tls.Server whose decrypted sockets are handed to the same
// HTTP/1.x transport as plain ones, so limits, time-outs, keep-alive and routing are shared.
// Optional client certificates are verified against a CA file; the issuer of a verified
// certificate reaches the task as `TLS-Cert-Issuer`, the header a
// TLS-terminating proxy in front of Rspamd would add. Certificates are re-read on reload
// (SIGHUP) and swapped with setSecureContext: open connections keep their session.

import { readFileSync } from 'node:fs';
import tls, { TLSSocket, type SecureContextOptions } from 'node:tls';
import { MailsiftError } from './errors.js';
import type { Transport } from './server.js';
import type { RequestHeaders } from './types.js';

/** Runtime form of `workers.<name>.tls` (paths already absolute). */
export interface TlsListenOptions {
  host: string;
  port: number;
  certFile: string;
  keyFile: string;
  /** Client certificates are requested and verified against this bundle when set. */
  caFile?: string;
  /** Refuse the handshake of a client without a valid certificate. */
  requireClientCert: boolean;
}

/**
 * Time a client gets to finish the TLS handshake: a peer that connects and stalls must not
 * hold a socket for Node's default two minutes (the HTTP time-outs start only afterwards).
 */
export const TLS_HANDSHAKE_TIMEOUT_MS = 10_000;

/** The request header that carries the client certificate's issuer. */
export const CERT_ISSUER_HEADER = 'TLS-Cert-Issuer';

/** Reads and checks the PEM files; throws ERR_TLS_FILES / ERR_TLS_CONFIG with the file named. */
export function readTlsMaterial(o: Pick<TlsListenOptions, 'certFile' | 'keyFile' | 'caFile'>): SecureContextOptions {
  const read = (path: string, what: string): Buffer => {
    try {
      return readFileSync(path);
    } catch (err) {
      throw new MailsiftError('ERR_TLS_FILES', `cannot read the TLS ${what} ${path}: ${(err as Error).message}`);
    }
  };
  const material: SecureContextOptions = {
    cert: read(o.certFile, 'certificate'),
    key: read(o.keyFile, 'key'),
    ...(o.caFile ? { ca: read(o.caFile, 'CA file') } : {}),
  };
  try {
    // Fails here, with the files named, on bad PEM or a key that does not match the certificate.
    tls.createSecureContext(material);
  } catch (err) {
    throw new MailsiftError('ERR_TLS_CONFIG', `unusable TLS certificate ${o.certFile} / key ${o.keyFile}: ${(err as Error).message}`);
  }
  return material;
}

export interface TlsListener {
  server: tls.Server;
  /** The bound port (useful when 0 was asked for). */
  port: number;
  /** Re-reads the files and uses them for new handshakes; throws (keeping the old ones) on error. */
  reload(): void;
  /** Stops accepting TLS connections; resolves once the ones it accepted have ended. */
  close(): Promise<void>;
}

/** Starts an HTTPS listener feeding `transport`. Connections are counted and drained by the transport. */
export function listenTls(transport: Transport, o: TlsListenOptions, onClientError?: (err: Error) => void): Promise<TlsListener> {
  const files = { certFile: o.certFile, keyFile: o.keyFile, ...(o.caFile ? { caFile: o.caFile } : {}) };
  const server = tls.createServer(
    {
      ...readTlsMaterial(files),
      requestCert: o.caFile !== undefined,
      rejectUnauthorized: o.requireClientCert,
      handshakeTimeout: TLS_HANDSHAKE_TIMEOUT_MS,
      allowHalfOpen: true,
      noDelay: true,
    },
    // The transport's connection listener takes any net.Socket; a TLSSocket is one.
    (socket) => transport.server.emit('connection', socket),
  );
  // A failed handshake (no or bad client certificate, garbage, time-out) only concerns that peer.
  server.on('tlsClientError', (err) => onClientError?.(err));
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    server.listen({ host: o.host, port: o.port }, () => {
      server.off('error', onError);
      const addr = server.address();
      resolve({
        server,
        port: typeof addr === 'object' && addr ? addr.port : o.port,
        reload: () => server.setSecureContext(readTlsMaterial(files)),
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
  });
}

/**
 * The issuer of the peer's certificate when the handshake verified it, as an RFC 2253
 * string (most specific RDN first, e.g. `CN=Mail CA,O=Example`), the form nginx's
 * `$ssl_client_i_dn` gives a proxy to put in TLS-Cert-Issuer.
 */
export function verifiedIssuer(socket: TLSSocket): string | undefined {
  if (!socket.authorized) return undefined;
  const cert = socket.getPeerX509Certificate();
  if (!cert) return undefined;
  // Node prints one RDN per line, least specific first, values already RFC 2253-escaped.
  return cert.issuer.split('\n').filter(Boolean).reverse().join(',');
}

export function isTlsSocket(socket: unknown): socket is TLSSocket {
  return socket instanceof TLSSocket;
}

/** Supplies TLS-Cert-Issuer from the connection when the client did not send one. */
export function addCertIssuer(headers: RequestHeaders, issuer: string | undefined): void {
  if (issuer !== undefined && !headers.has(CERT_ISSUER_HEADER.toLowerCase())) headers.add(CERT_ISSUER_HEADER, issuer);
}
