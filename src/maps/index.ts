// The maps framework: declared maps with file, http(s) and inline sources,
// set/hash/regexp/glob/radix lookups, background reloading, and the registry the controller
// reads. Modules use it through the plugin API (`ctx.maps`).

export { createMapRegistry, mapId, MapRegistry, DEFAULT_FILE_CHECK_MS, DEFAULT_HTTP_POLL_SECONDS } from './registry.js';
export type { MapRegistryOptions } from './registry.js';
export { parseMapText, MAX_MAP_LINE_BYTES } from './parse-lines.js';
export type { MapEntry } from './parse-lines.js';
export { compileMapData, globToRegExp, DEFAULT_MAP_VALUE } from './kinds.js';
export { MapError } from './types.js';
export type { MapDefinition, MapHandle, MapKind, MapSourceInfo, MapErrorCode } from './types.js';
