// The built-in rule modules, in load order. Each is written against src/plugin-api only.
import type { ModuleDefinition } from '../plugin-api/index.js';
import { gtubeModule } from './gtube/index.js';
import { headersModule } from './headers/index.js';
import { mimeModule } from './mime/index.js';
import { receivedModule } from './received/index.js';
import { milterHeadersModule } from './milter-headers/index.js';

export { gtubeModule, headersModule, mimeModule, receivedModule, milterHeadersModule };

// Modules carry different config types; the engine validates each with the module's own schema.
export const builtinModules: ModuleDefinition<any>[] = [ // eslint-disable-line @typescript-eslint/no-explicit-any -- heterogeneous config types
  gtubeModule,
  headersModule,
  mimeModule,
  receivedModule,
  milterHeadersModule,
];
