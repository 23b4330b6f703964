// How the controller's endpoint families plug into one route table. Each family lives in its
// own file under src/workers/controller/ and exports a function `xxxRoutes(ctx) → ControllerRoute[]`;
// index.ts composes them, and performs routing, authentication (by `level`) and error replies
// once, so a family file contains only its endpoints' logic.

import type { Request, Reply } from '../../http/types.js';
import type { Logger } from '../../plugin-api/index.js';
import type { Engine } from '../../engine/index.js';
import type { LoadedConfig } from '../../config/load.js';
import type { Stores } from '../../storage/types.js';
import type { StatsView } from '../../observability/stats-hub.js';
import type { StatsRecorder } from '../../observability/stats-recorder.js';

/** Authorisation level of an endpoint. */
export type AuthLevel = 'none' | 'normal' | 'enable';

/** What the auth step decided for this request; handed to the handler. */
export interface ControllerSession {
  /** Peer address (normalised, no port). */
  peer: string;
  /** Whether enable-level endpoints would refuse this session (what /auth and /stat report). */
  readOnly: boolean;
  /** How the request was let in. */
  via: 'secure_ip' | 'enable_password' | 'password' | 'no_password' | 'none';
}

export interface ControllerRoute {
  /** Lower-case path with the leading slash, e.g. `/stat`, `/plugins/maps/query`. */
  path: string;
  level: AuthLevel;
  /**
   * The route scans or learns the message in the body: `Shm`/`File` headers may name it instead
   * (src/protocol/message-source.ts), read before the handler runs, after authentication.
   */
  message?: boolean;
  /** Served for this plugin (plugins.ts): a path the controller serves itself wins over it. */
  plugin?: string;
  handler(req: Request, session: ControllerSession): Reply | Promise<Reply>;
}

/**
 * Everything endpoint families may use. Families receive one shared object; fields are added
 * here (additively) as later issues bring their parts (stats aggregation, maps, plugin endpoints).
 */
export interface ControllerContext {
  log: Logger;
  config: LoadedConfig;
  /** The controller's own engine: /symbols, /actions listings and /scan, /checkv2 on the controller. */
  engine: Engine;
  stores: Stores;
  /**
   * Server statistics (added by the controller core): `view` reads the aggregate of every worker,
   * `recorder` counts this process's scans, learns (`recorder.learned()`) and control connections.
   * index.ts supplies a process-local hub when absent.
   */
  stats?: ControllerStats;
  /** Epoch ms the controller process started (uptime); now when absent. */
  startedAt?: number;
}

export interface ControllerStats {
  view: StatsView;
  recorder: StatsRecorder;
}
