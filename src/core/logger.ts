// The logger every layer writes to. Only the shape lives here, at the bottom of the import graph,
// so stores, maps, the network runtime and observability can take a logger without importing the
// plugin API above them; the implementation is observability/log.ts.

export interface Logger {
  debug(msg: string, extra?: Record<string, unknown>): void;
  info(msg: string, extra?: Record<string, unknown>): void;
  warn(msg: string, extra?: Record<string, unknown>): void;
  error(msg: string, extra?: Record<string, unknown>): void;
}
