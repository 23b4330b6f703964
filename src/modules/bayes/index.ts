import { defineModule } from '../../plugin-api/index.js';
import { BayesClassifier } from '../../rule-libs/bayes/classifier.js';
import { BayesConfig } from './config.js';
import { makeAutolearnCheck } from './autolearn.js';
import { makeClassifyCheck } from './check.js';
import { BAYES_SYMBOLS, bayesSymbols } from './symbols.js';
import { storeOutageLog } from '../../module-helpers/outage-log.js';
import { bayesLearner, registerBayesEndpoints } from './endpoints.js';

/**
 * The Bayes classifier: classifies after the filters (as Rspamd's classifiers
 * stage does) and, when configured, autolearns once the verdict is known. Needs the Bayes store:
 * without one the module switches itself off with the reason "store".
 */
export const bayesModule = defineModule<BayesConfig>({
  name: 'bayes',
  config: BayesConfig,
  symbols: BAYES_SYMBOLS,
  setup(ctx) {
    const cfg = ctx.config;
    const classifier = new BayesClassifier(cfg);
    registerBayesEndpoints(ctx, classifier);
    const store = ctx.stores?.bayes;
    if (!store) {
      ctx.disable('store: no statistics store configured');
      return;
    }
    // Learning answers a client that waits for it: the stores' full time-out, not a scan's.
    ctx.learner(bayesLearner(classifier, ctx.learnStores?.bayes ?? store));
    const symbols = Object.keys(bayesSymbols(cfg.spam_symbol, cfg.ham_symbol));
    const outage = storeOutageLog(ctx.log, 'bayes');
    ctx.symbol({
      // The callback carries the spam statfile's name: disabling BAYES_SPAM by settings skips the whole classifier.
      name: cfg.spam_symbol,
      stage: 'postfilters',
      priority: 100,
      inserts: symbols,
      flags: ['coro', 'nostat'],
      check: makeClassifyCheck(classifier, store, outage),
    });
    if (cfg.autolearn !== false) {
      ctx.symbol({ name: 'BAYES_AUTOLEARN', stage: 'idempotent', flags: ['coro', 'nostat'], check: makeAutolearnCheck(classifier, store, outage) });
    }
  },
});
