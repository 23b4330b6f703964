// HTTP requests of one task. Any status is a response, not an error; failures
// (time-out, DNS, refused, reset, body too large) are `err` text in Rspamd's wording. Host names
// go through the worker's resolver so lookups share its cache and the task's deadline.

import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { LookupFunction } from 'node:net';
import { isDnsError } from './dns-errors.js';
import { callBudget, dispatch, NetError } from './scope.js';
import type { NetScope } from './scope.js';
import type { HttpCallback, HttpRequest, HttpResponse, HttpResult, TaskHttp } from './types.js';

/** Rspamd's HTTP timeout default, seconds. */
export const DEFAULT_HTTP_TIMEOUT = 5;
/** Response bodies above this are refused unless the call sets max_size: a hostile server cannot exhaust memory. */
export const DEFAULT_HTTP_MAX_SIZE = 256 * 1024 * 1024;

function makeLookup(scope: NetScope): LookupFunction {
  return (hostname, options, callback) => {
    const all = (options as { all?: boolean }).all === true;
    const done = (err: NodeJS.ErrnoException | null, addrs: Array<{ address: string; family: number }>): void => {
      if (err) return (callback as (e: NodeJS.ErrnoException) => void)(err);
      if (all) (callback as (e: null, a: Array<{ address: string; family: number }>) => void)(null, addrs);
      else callback(null, addrs[0]!.address, addrs[0]!.family);
    };
    if (hostname === 'localhost') return done(null, [{ address: '127.0.0.1', family: 4 }]);
    const signal = scope.signal;
    void Promise.allSettled([scope.resolver.lookup(hostname, 'A', signal), scope.resolver.lookup(hostname, 'AAAA', signal)]).then(([a, aaaa]) => {
      const addrs: Array<{ address: string; family: number }> = [];
      if (a.status === 'fulfilled') for (const r of a.value.records) addrs.push({ address: r as string, family: 4 });
      if (aaaa.status === 'fulfilled') for (const r of aaaa.value.records) addrs.push({ address: r as string, family: 6 });
      if (addrs.length > 0) return done(null, addrs);
      const reason = a.status === 'rejected' ? a.reason : undefined;
      const text = isDnsError(reason) ? `unable to resolve host: ${reason.text}` : 'unable to resolve host';
      done(Object.assign(new Error(text), { code: 'ENOTFOUND', mailsiftText: text }), []);
    });
  };
}

function headerMap(h: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

function errorText(e: NodeJS.ErrnoException & { mailsiftText?: string }, phase: 'connect' | 'read'): string {
  if (e.mailsiftText) return e.mailsiftText;
  if (e.code === 'ECONNREFUSED' || e.code === 'EHOSTUNREACH' || e.code === 'ENETUNREACH') return 'unable to make connection to the host';
  return phase === 'connect' ? `unable to make connection to the host: ${e.message}` : `IO read error: ${e.message}`;
}

function perform(scope: NetScope, req: HttpRequest): Promise<HttpResult> {
  if (scope.ended) return Promise.resolve({ err: 'session is terminating' });
  let url: URL;
  try {
    url = new URL(req.url);
  } catch {
    return Promise.resolve({ err: `cannot create HTTP message from url ${req.url}` });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return Promise.resolve({ err: `unsupported URL scheme ${url.protocol}` });
  const body = req.body === undefined ? undefined : typeof req.body === 'string' ? Buffer.from(req.body) : req.body;
  const method = (req.method ?? (body ? 'POST' : 'GET')).toUpperCase();
  const maxSize = req.max_size && req.max_size > 0 ? req.max_size : DEFAULT_HTTP_MAX_SIZE;
  const budget = callBudget(scope, req.timeout, DEFAULT_HTTP_TIMEOUT);
  const headers: Record<string, string | string[]> = { ...(req.headers ?? {}) };
  if (body && !Object.keys(headers).some((k) => k.toLowerCase() === 'content-length')) headers['Content-Length'] = String(body.length);

  return new Promise<HttpResult>((resolve) => {
    let settled = false;
    let phase: 'connect' | 'read' = 'connect';
    const finish = (r: HttpResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      scope.signal.removeEventListener('abort', onAbort);
      if (r.err !== undefined) creq.destroy();
      resolve(r);
    };
    const onAbort = (): void => finish({ err: scope.ended ? 'session is terminating' : 'IO timeout' });
    const timer = setTimeout(() => finish({ err: 'IO timeout' }), budget);
    const lib = url.protocol === 'https:' ? https : http;
    const opts: http.RequestOptions = { method, headers, agent: false };
    if (!net.isIP(url.hostname.replace(/^\[|\]$/g, ''))) opts.lookup = makeLookup(scope);
    const creq = lib.request(url, opts, (res) => {
      phase = 'read';
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > maxSize) return finish({ err: `IO read error: response is larger than ${maxSize} bytes` });
        chunks.push(c);
      });
      res.on('end', () => {
        const buf = Buffer.concat(chunks);
        const response: HttpResponse = { code: res.statusCode ?? 0, content: buf.toString('utf8'), body: buf, headers: headerMap(res.headers) };
        finish({ response });
      });
      res.on('error', (e) => finish({ err: errorText(e, 'read') }));
      res.on('aborted', () => finish({ err: 'IO read error: connection terminated' }));
    });
    creq.on('error', (e: NodeJS.ErrnoException) => finish({ err: errorText(e, phase) }));
    if (scope.signal.aborted) return onAbort();
    scope.signal.addEventListener('abort', onAbort, { once: true });
    creq.end(body);
  });
}

export class TaskHttpImpl implements TaskHttp {
  constructor(private readonly scope: NetScope) {}

  request(req: HttpRequest & { callback: HttpCallback }): boolean;
  request(req: HttpRequest & { callback?: undefined }): Promise<HttpResult>;
  request(req: HttpRequest): boolean | Promise<HttpResult> {
    if (typeof req?.url !== 'string') throw new NetError('NET_BAD_REQUEST', 'http.request needs a url');
    const cb = req.callback;
    return dispatch(this.scope, 'http', cb, () => perform(this.scope, req), (r) => {
      if (r.err !== undefined || !r.response) cb!(r.err ?? 'unknown error');
      else cb!(undefined, r.response.code, r.response.body, r.response.headers);
    });
  }
}
