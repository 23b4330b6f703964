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
import { rblModule } from './rbl/index.js';
import { dkimSigningModule } from './dkim-signing/index.js';
import { phishingModule } from './phishing/index.js';
import { hfilterModule } from './hfilter/index.js';
import { htmlChecksModule } from './html-checks/index.js';
import { urlChecksModule } from './url-checks/index.js';
import { headerRegexpsModule } from './header-regexps/index.js';
import { compositesModule } from './composites/index.js';
import { multimapModule } from './multimap/index.js';
import { ratelimitModule } from './ratelimit/index.js';
import { greylistModule } from './greylist/index.js';
import { repliesModule } from './replies/index.js';
import { contentHeuristicsModule } from './content-heuristics/index.js';
import { maillistModule } from './maillist/index.js';
import { neuralModule } from './neural/index.js';
import { antivirusModule } from './antivirus/index.js';
import { forceActionsModule } from './force-actions/index.js';
import { bitcoinModule } from './bitcoin/index.js';
import { chartableModule } from './chartable/index.js';
import { mxCheckModule } from './mx-check/index.js';
import { reputationModule } from './reputation/index.js';

export { gtubeModule, headersModule, mimeModule, receivedModule, milterHeadersModule, bayesModule, fuzzyCheckModule };
export { spfModule, dkimModule, dmarcModule, arcModule, whitelistModule, dkimSigningModule };
export { rblModule };
export { phishingModule, hfilterModule, htmlChecksModule, urlChecksModule };
export { headerRegexpsModule, compositesModule, maillistModule };
export { multimapModule, ratelimitModule, greylistModule, repliesModule, contentHeuristicsModule, neuralModule };
export { antivirusModule };
export { forceActionsModule };
export { bitcoinModule };
export { chartableModule, mxCheckModule, reputationModule };

// Modules carry different config types; the engine validates each with the module's own schema.
export const builtinModules: ModuleDefinition<any>[] = [ // eslint-disable-line @typescript-eslint/no-explicit-any -- heterogeneous config types
  gtubeModule,
  headersModule,
  headerRegexpsModule,
  compositesModule,
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
  rblModule,
  phishingModule,
  hfilterModule,
  htmlChecksModule,
  chartableModule,
  urlChecksModule,
  contentHeuristicsModule,
  bitcoinModule,
  maillistModule,
  multimapModule,
  ratelimitModule,
  greylistModule,
  mxCheckModule,
  reputationModule,
  repliesModule,
  neuralModule,
  antivirusModule,
  forceActionsModule,
];
