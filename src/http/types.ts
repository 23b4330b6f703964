// The plain request/reply shapes the transport hands to routers and takes back.

/** Multi-valued, case-insensitive request headers; values keep trailing whitespace. */
export class RequestHeaders {
  /** lower-case name → values in arrival order. */
  readonly map = new Map<string, string[]>();
  /** Names as sent, in arrival order (for logging and faithful re-emission). */
  readonly raw: Array<[string, string]> = [];

  add(name: string, value: string): void {
    const key = name.toLowerCase();
    const list = this.map.get(key);
    if (list) list.push(value);
    else this.map.set(key, [value]);
    this.raw.push([name, value]);
  }

  /** Replace every value of `name` (used when query parameters become headers). */
  set(name: string, value: string): void {
    const key = name.toLowerCase();
    this.map.set(key, [value]);
    this.raw.push([name, value]);
  }

  has(name: string): boolean {
    return this.map.has(name);
  }

  /** First occurrence; `name` must be lower-case. */
  first(name: string): string | undefined {
    return this.map.get(name)?.[0];
  }

  /** Last occurrence; `name` must be lower-case. */
  last(name: string): string | undefined {
    const list = this.map.get(name);
    return list ? list[list.length - 1] : undefined;
  }

  all(name: string): string[] {
    return this.map.get(name) ?? [];
  }
}

export interface Request {
  method: string;
  /** Path without query string, as sent (percent-encoding kept). */
  path: string;
  /** Decoded query parameters (last wins), names lower-case. */
  query: Map<string, string>;
  headers: RequestHeaders;
  body: Buffer;
  /** 'HTTP/1.0' or 'HTTP/1.1'. */
  version: string;
  peer: { address: string; port: number };
  tls: boolean;
  /** Issuer of the client certificate verified by the TLS handshake (src/http/tls.ts). */
  tlsCertIssuer?: string;
  /** Set for the legacy spamc/rspamc text dialects (no HTTP reply framing); `method` is the verb. */
  legacy?: 'spamc' | 'rspamc';
  /** Set when the request arrived HTTP-encrypted: the client's public key (base32). */
  crypt?: { peerKey: string };
}

export interface Reply {
  status: number;
  /** Reason phrase; the status's standard text when absent. */
  reason?: string;
  /** Extra headers, emitted after Content-Type in this order. */
  headers?: Array<[string, string]>;
  contentType?: string;
  body: Buffer | string;
  /** Close the connection after this reply even if the client asked for keep-alive. */
  close?: boolean;
  /** The body is the whole reply (legacy text dialects): no HTTP status line or headers. */
  raw?: boolean;
}

export type Handler = (req: Request) => Promise<Reply> | Reply;
