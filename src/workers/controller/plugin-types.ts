// What a controller plugin file sees (interface.md "Plugin endpoint definition", controller.md
// §5): endpoint definitions with handler(task, conn, params), the connection's reply methods
// (Rspamd's snake_case names and camelCase aliases), and the small API a plugin file is given.

import type { RequestHeaders } from '../../http/types.js';
import type { Logger, MapHandle, Message } from '../../plugin-api/index.js';

export interface PluginConn {
  /** Reply 200 with the value as JSON. */
  send_ucl(value: unknown): void;
  /** Reply 200 with the string as it is (Content-Type application/json, as Rspamd does). */
  send_string(text: string): void;
  /** Reply ERR(status, message). */
  send_error(status: number, message: string): void;
  sendUcl(value: unknown): void;
  sendString(text: string): void;
  sendError(status: number, message: string): void;
}

export interface PluginTask {
  /** The request body (the message for need_task endpoints; empty otherwise). */
  readonly content: Buffer;
  get_content(): Buffer;
  getContent(): Buffer;
  /** The body parsed as a message (lazily, once). */
  message(): Message;
  /** The request's headers (a need_task endpoint reads the scan headers from them: IP, From, Rcpt…). */
  readonly headers: RequestHeaders;
}

export type PluginParams = Record<string, string>;

export interface PluginEndpointDef {
  handler(task: PluginTask, conn: PluginConn, params: PluginParams): unknown;
  /** true: the enable (privileged) password is needed; false: the normal one suffices. */
  enable?: boolean;
  /** A non-empty body is required and handed over as a message. */
  need_task?: boolean;
  needTask?: boolean;
  version?: number;
}

/** plugin name → endpoint name → definition. */
export type PluginTable = Record<string, Record<string, PluginEndpointDef>>;

export interface NamedMap {
  /** First source URI of the map. */
  uri: string;
  /** Last path component of the URI. */
  alias: string;
  map: MapHandle;
}

/** Handed to a plugin file that exports `plugins` as a function. */
export interface ControllerPluginApi {
  log: Logger;
  maps: { list(): NamedMap[] };
}

/** A plugin file exports `plugins`: the table, or a function of the API returning it. */
export type PluginFileExport = PluginTable | ((api: ControllerPluginApi) => PluginTable | Promise<PluginTable>);
