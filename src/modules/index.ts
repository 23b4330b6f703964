// The built-in rule modules, in load order. Each is written against src/plugin-api only.
import type { ModuleDefinition } from '../plugin-api/index.js';
import { gtubeModule } from './gtube/index.js';
import { headersModule } from './headers/index.js';
import { mimeModule } from './mime/index.js';
import { receivedModule } from './received/index.js';
import { milterHeadersModule } from './milter-headers/index.js';
import { bayesModule } from './bayes/index.js';
import { fuzzyCheckModule } from './fuzzy-check/index.js';
import { spfModule } from './spf/index.js';
import { dkimModule } from './dkim/index.js';
import { dmarcModule } from './dmarc/index.js';
import { arcModule } from './arc/index.js';
import { whitelistModule } from './whitelist/index.js';
import { dkimSigningModule } from './dkim-signing/index.js';

export { gtubeModule, headersModule, mimeModule, receivedModule, milterHeadersModule, bayesModule, fuzzyCheckModule };
export { spfModule, dkimModule, dmarcModule, arcModule, whitelistModule, dkimSigningModule };

// Modules carry different config types; the engine validates each with the module's own schema.
export const builtinModules: ModuleDefinition<any>[] = [ // eslint-disable-line @typescript-eslint/no-explicit-any -- heterogeneous config types
  gtubeModule,
  headersModule,
  mimeModule,
  receivedModule,
  milterHeadersModule,
  bayesModule,
  fuzzyCheckModule,
  spfModule,
  dkimModule,
  dmarcModule,
  arcModule,
  whitelistModule,
  dkimSigningModule,
];
