// Controller endpoints a module owns: a module
// registers them in setup with ctx.endpoint(plugin, path, def); the controller only dispatches,
// authenticates (by `enable`) and frames the reply. The connection and task keep Rspamd's
// snake_case names beside camelCase ones, so handlers ported from Rspamd read as they did.

import type { Message } from '../message/types.js';
import type { ScanMeta, ScanResult } from '../core/scan-types.js';

/** Replies of one endpoint call; the last one sent wins. */
export interface EndpointConn {
  /** Reply 200 with the value as JSON. */
  send_ucl(value: unknown): void;
  /** Reply 200 with the string as it is. */
  send_string(text: string): void;
  /** Reply with an error status and message (body `{"error": message}`). */
  send_error(status: number, message: string): void;
  sendUcl(value: unknown): void;
  sendString(text: string): void;
  sendError(status: number, message: string): void;
}

export type LearnClass = 'spam' | 'ham';

export interface LearnOptions {
  /** Only the classifier of this name (the `Classifier` request header); all when absent. */
  classifier?: string;
}

/**
 * What an endpoint handler gets as its task. Without need_task only the request headers and an
 * empty content are there; with need_task the body is the message, which can be parsed, scanned
 * with the server's rules, and learned by the classifiers the modules registered.
 */
export interface EndpointTask {
  /** The request body (the message for need_task endpoints; a JSON or form body for others). */
  readonly content: Buffer;
  get_content(): Buffer;
  getContent(): Buffer;
  /** The body parsed as a message (lazily, once). */
  message(): Message;
  /** First value of a request header (case-insensitive name). */
  getRequestHeader(name: string): string | undefined;
  get_request_header(name: string): string | undefined;
  /** Every value of a request header, in order. */
  getRequestHeaders(name: string): string[];
  /** Scan metadata from the request headers (IP, From, Rcpt, Deliver-To, …), as /checkv2 reads them. */
  meta(): ScanMeta;
  /** Scan the message with every rule of this worker's engine (result cached for the call). */
  scan(): Promise<ScanResult>;
  /**
   * Learn the message as spam or ham with the registered learners (the Bayes classifier). Throws
   * a coded error (`LEARN_*`) when no learner took it; the controller maps codes to statuses.
   */
  learn(cls: LearnClass, opts?: LearnOptions): Promise<void>;
}

export type EndpointParams = Record<string, string>;

export interface EndpointDef {
  handler(task: EndpointTask, conn: EndpointConn, params: EndpointParams): unknown;
  /** true: the enable (privileged) password is required; false: the normal one suffices. */
  enable?: boolean;
  /** A non-empty body is required and handed over as the task's message. */
  need_task?: boolean;
  needTask?: boolean;
  version?: number;
}

/**
 * A classifier that learns messages from endpoints (`task.learn`). Throws coded errors:
 * `LEARN_CLASSIFIER_UNKNOWN` when `opts.classifier` names none of its classifiers (the next
 * learner is asked), `LEARN_*` otherwise.
 */
export interface Learner {
  name: string;
  learn(task: EndpointTask, cls: LearnClass, opts: LearnOptions): Promise<void>;
}

/** Plugin and endpoint names become URL path segments. */
export const ENDPOINT_NAME_RE = /^[A-Za-z0-9_.-]+$/;
/** An absolute endpoint path (`/learnspam`): segments of the same characters. */
export const ENDPOINT_PATH_RE = /^(\/[A-Za-z0-9_.-]+)+$/;

/** The path an endpoint is served at: `/plugins/{plugin}/{name}`, or the absolute path as given. */
export function endpointPath(plugin: string, name: string): string {
  return name.startsWith('/') ? name : `/plugins/${plugin}/${name}`;
}

/** Why a registration is malformed, or undefined when it is fine. */
export function endpointProblem(plugin: unknown, name: unknown, def: unknown): string | undefined {
  if (typeof plugin !== 'string' || !ENDPOINT_NAME_RE.test(plugin)) return `plugin name ${JSON.stringify(plugin)} is not a URL path segment ([A-Za-z0-9_.-]+)`;
  if (typeof name !== 'string' || !(ENDPOINT_NAME_RE.test(name) || ENDPOINT_PATH_RE.test(name))) return `endpoint ${JSON.stringify(name)} is neither a path segment nor an absolute path`;
  if (typeof def !== 'object' || def === null) return `endpoint ${name}: the definition is not an object`;
  const d = def as Record<string, unknown>;
  if (typeof d.handler !== 'function') return `endpoint ${name}: handler is not a function`;
  for (const key of ['enable', 'need_task', 'needTask'] as const) {
    if (d[key] !== undefined && typeof d[key] !== 'boolean') return `endpoint ${name}: ${key} must be true or false`;
  }
  if (d.version !== undefined && (typeof d.version !== 'number' || !Number.isFinite(d.version))) return `endpoint ${name}: version must be a number`;
  return undefined;
}
