// One piece of content to one scanner through the task's network calls: the request of the
// rule's protocol, its reply read into a verdict, and another server (round-robin) after a
// network error, up to `retransmits` more attempts. A reply that says something we cannot read
// is not retried: the scanner answered, and asking again would get the same answer.
import type { Task } from '../../plugin-api/index.js';
import { serverName, type CompiledRule, type ScannerServer } from './rule.js';
import type { ScanContent } from './select-content.js';
import { clamdInstream, lineRequest, parseClamdReply, parseHttpReply, parseLineReply, type ScanVerdict } from './wire.js';

/** Largest HTTP reply body read from the HTTP hook: a verdict is a few names. */
export const MAX_HTTP_REPLY = 64 * 1024;

/** One attempt: a verdict, or `network` for a failure worth another server. */
type Attempt = ScanVerdict | { kind: 'network'; text: string };

async function askClamd(task: Task, server: ScannerServer, item: ScanContent, timeout: number): Promise<Attempt> {
  const r = await task.tcp.request({ ...server, data: clamdInstream(item.content), stop_pattern: '\0', timeout });
  if (r.err !== undefined) return { kind: 'network', text: r.err };
  return parseClamdReply((r.data ?? Buffer.alloc(0)).toString('utf8'));
}

async function askLine(task: Task, server: ScannerServer, item: ScanContent, timeout: number): Promise<Attempt> {
  const r = await task.tcp.request({ ...server, data: lineRequest(item.content), stop_pattern: '\n', timeout });
  if (r.err !== undefined) return { kind: 'network', text: r.err };
  return parseLineReply((r.data ?? Buffer.alloc(0)).toString('utf8'));
}

async function askHttp(task: Task, server: ScannerServer, item: ScanContent, timeout: number, path: string): Promise<Attempt> {
  // compileRule refuses socket paths for http rules; this keeps the URL below well-typed.
  if (server.port === undefined) return { kind: 'error', text: `${server.host}: http cannot use a socket path` };
  const host = server.host.includes(':') ? `[${server.host}]` : server.host;
  const headers: Record<string, string> = { 'Content-Type': 'application/octet-stream' };
  // Names are the sender's text: percent-encoded so no byte of theirs shapes our request.
  if (item.filename !== undefined) headers['X-Filename'] = encodeURIComponent(item.filename);
  if (item.contentType !== undefined) headers['X-Content-Type'] = encodeURIComponent(item.contentType);
  const r = await task.http.request({ url: `http://${host}:${server.port}${path}`, method: 'POST', headers, body: item.content, timeout, max_size: MAX_HTTP_REPLY });
  if (r.err !== undefined || !r.response) return { kind: 'network', text: r.err ?? 'no reply' };
  return parseHttpReply(r.response.code, r.response.content);
}

function attempt(task: Task, rule: CompiledRule, server: ScannerServer, item: ScanContent): Promise<Attempt> {
  const timeout = rule.opts.timeout;
  if (rule.type === 'clamav') return askClamd(task, server, item, timeout);
  if (rule.type === 'tcp') return askLine(task, server, item, timeout);
  return askHttp(task, server, item, timeout, rule.opts.path);
}

/** The scanner's verdict on `item`; network failures that outlast the retransmits become an error verdict. */
export async function scanContent(task: Task, rule: CompiledRule, item: ScanContent): Promise<ScanVerdict> {
  let last = '';
  for (let i = 0; i <= rule.opts.retransmits; i++) {
    const server = rule.servers[rule.next]!;
    rule.next = (rule.next + 1) % rule.servers.length;
    if (task.signal.aborted) break;
    const r = await attempt(task, rule, server, item);
    if (r.kind !== 'network') return r;
    last = `${serverName(server)}: ${r.text}`;
    task.log.debug('antivirus: scanner unreachable, trying again', { rule: rule.name, server: serverName(server), error: r.text });
  }
  return { kind: 'error', text: `failed to scan, maximum retransmits exceed (${last || 'task ended'})` };
}
