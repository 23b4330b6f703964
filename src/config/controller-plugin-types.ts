// What a controller plugin file sees (as Rspamd's
// controller plugins do): the same endpoint definitions, connection and task as a module's ctx.endpoint
// (src/plugin-api/endpoints.ts), grouped in a table, and the small API a plugin file is given.

import type { EndpointConn, EndpointDef, EndpointParams, EndpointTask, Logger, MapHandle } from '../plugin-api/index.js';

export type PluginConn = EndpointConn;
export type PluginTask = EndpointTask;
export type PluginParams = EndpointParams;
export type PluginEndpointDef = EndpointDef;

/** plugin name → endpoint name (or absolute path, for modules' endpoints) → definition. */
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
