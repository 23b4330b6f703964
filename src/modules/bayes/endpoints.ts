// The Bayes module's controller endpoints: /learnspam
// and /learnham learn the request's message through task.learn (which asks this module's
// learner, so a learning endpoint of another plugin learns the same way), /bayes/classifiers
// lists the classifier (Rspamd master). Refusals are LearnError codes; the controller renders
// each with Rspamd's status (src/http/errors.ts).

import type { BayesStore } from '../../plugin-api/index.js';
import type { EndpointTask, LearnClass, LearnOptions, Learner, ModuleContext } from '../../plugin-api/index.js';
import { BayesClassifier, principalUser } from '../../rule-libs/bayes/classifier.js';
import type { BayesConfig } from './config.js';

/** `LEARN_CLASSIFIER_UNKNOWN`: the Classifier header names another classifier than this one. */
function unknownClassifier(name: string): Error {
  return Object.assign(new Error(`cannot find classifier with name ${name}`), { code: 'LEARN_CLASSIFIER_UNKNOWN' });
}

export function bayesLearner(classifier: BayesClassifier, store: BayesStore): Learner {
  return {
    name: classifier.name,
    async learn(task: EndpointTask, cls: LearnClass, opts: LearnOptions): Promise<void> {
      if (opts.classifier !== undefined && opts.classifier.toLowerCase() !== classifier.name.toLowerCase()) throw unknownClassifier(opts.classifier);
      const msg = task.message();
      const user = principalUser(task.getRequestHeader('deliver-to'), task.getRequestHeaders('rcpt'), msg);
      const bulk = task.getRequestHeader('learn-type')?.trim().toLowerCase() === 'bulk';
      // A store outage propagates as its LearnError: the controller answers 503 and logs it once per period.
      await classifier.learn(store, classifier.tokenize(msg), { cls, messageId: msg.messageId, bulk, user });
    },
  };
}

/** Registered before the module checks its store: without one the endpoints still answer (404 no classifiers). */
export function registerBayesEndpoints(ctx: ModuleContext<BayesConfig>, classifier: BayesClassifier): void {
  const learn = (cls: LearnClass) => async (task: EndpointTask, conn: { send_ucl(v: unknown): void }) => {
    const wanted = task.getRequestHeader('classifier')?.trim();
    await task.learn(cls, wanted ? { classifier: wanted } : {});
    conn.send_ucl({ success: true });
  };
  ctx.endpoint('bayes', '/learnspam', { enable: true, need_task: true, handler: learn('spam') });
  ctx.endpoint('bayes', '/learnham', { enable: true, need_task: true, handler: learn('ham') });
  ctx.endpoint('bayes', '/bayes/classifiers', {
    enable: false,
    handler(_task, conn) {
      conn.send_ucl({ classifiers: [{ name: classifier.name, type: 'binary', per_user: classifier.config.per_user, classes: ['spam', 'ham'] }] });
    },
  });
}
