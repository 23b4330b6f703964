// Learning endpoints (controller.md §4.15, statistics.md §5): /learnspam and /learnham parse the
// message, tokenise it with the configured classifier and learn it in the Bayes store, answering
// with Rspamd's texts and statuses; /bayes/classifiers lists the classifiers (Rspamd master).
import { ERROR_TABLE } from '../../http/errors.js';
import type { Request } from '../../http/types.js';
import { parseMessage } from '../../message/parse-message.js';
import type { BayesClass } from '../../storage/types.js';
import { BayesClassifier, bayesConfig, principalUser, type LearnErrorCode } from '../../stats/index.js';
import { ControllerError, jsonReply, successReply } from './json.js';
import { logStoreOutage } from './store-outage.js';
import type { ControllerContext, ControllerRoute } from './types.js';

/** The configured classifiers (one today: the bayes module's), none when the module is off. */
export function configuredClassifiers(ctx: ControllerContext): BayesClassifier[] {
  if (ctx.config.engine.disabledModules.includes('bayes')) return [];
  return [new BayesClassifier(bayesConfig(ctx.config.engine.modules['bayes']))];
}

export function learnRoutes(ctx: ControllerContext): ControllerRoute[] {
  const classifiers = configuredClassifiers(ctx);

  const learn = (cls: BayesClass) => async (req: Request) => {
    if (req.body.length === 0) throw new ControllerError(400, 'Empty body is not permitted');
    if (classifiers.length === 0) throw new ControllerError(404, 'no classifiers defined');
    const wanted = req.headers.first('classifier')?.trim();
    const selected = wanted ? classifiers.filter((c) => c.name.toLowerCase() === wanted.toLowerCase()) : classifiers;
    if (selected.length === 0) throw new ControllerError(404, `cannot find classifier with name ${wanted}`);
    const msg = parseMessage(req.body);
    const rcpt = req.headers.all('rcpt');
    const user = principalUser(req.headers.first('deliver-to'), rcpt, msg);
    const bulk = req.headers.first('learn-type')?.trim().toLowerCase() === 'bulk';
    let learned = 0;
    let denied: Error | undefined;
    for (const c of selected) {
      try {
        await c.learn(ctx.stores.bayes, c.tokenize(msg), { cls, messageId: msg.messageId, bulk, user });
        learned++;
      } catch (err) {
        const code = (err as { code?: unknown }).code as LearnErrorCode | undefined;
        // LearnError codes are in the one error table (src/http/errors.ts) with Rspamd's statuses.
        const status = code !== undefined ? ERROR_TABLE[code]?.status : undefined;
        if (status === undefined) throw err;
        // A classifier whose conditions refused is skipped; Rspamd answers 204 only when all did
        // (a bodiless 204: the text is the reason phrase, json.ts controllerError).
        if (code === 'LEARN_CONDITIONS_DENIED') {
          denied = err as Error;
          continue;
        }
        // Once per period, not per request: a learning client retrying in a loop floods nothing.
        if (code === 'LEARN_STORE_UNAVAILABLE' || code === 'LEARN_STORE_FAILED') logStoreOutage(ctx.log, 'statistics', err);
        throw new ControllerError(status, (err as Error).message);
      }
    }
    if (learned === 0) {
      const where = selected.length === 1 ? selected[0]!.name : 'default classifier';
      throw new ControllerError(204, denied && selected.length === 1 ? denied.message : `all learn conditions denied learning ${cls} in ${where}`);
    }
    ctx.stats?.recorder.learned();
    return successReply();
  };

  return [
    { path: '/learnspam', level: 'enable', message: true, handler: learn('spam') },
    { path: '/learnham', level: 'enable', message: true, handler: learn('ham') },
    {
      path: '/bayes/classifiers',
      level: 'normal',
      handler: () =>
        jsonReply({
          classifiers: classifiers.map((c) => ({ name: c.name, type: 'binary', per_user: c.config.per_user, classes: ['spam', 'ham'] })),
        }),
    },
  ];
}
