// /plugins/neural/learn (plugins.md §c.6): routed to the neural module of the controller's
// engine, which validates the body and trains. Kept to this one file: when modules declare
// their own controller endpoints, this becomes the module's registration.
import { neuralLearnerFor } from '../../modules/neural/learn.js';
import { scanStores } from '../../storage/types.js';
import { controllerError, jsonReply } from './json.js';
import type { ControllerContext, ControllerRoute } from './types.js';

export function neuralRoutes(ctx: ControllerContext): ControllerRoute[] {
  return [{
    path: '/plugins/neural/learn',
    level: 'enable',
    async handler(req) {
      const learner = neuralLearnerFor(scanStores(ctx.stores).kv);
      if (!learner) return controllerError(404, 'neural module is not configured');
      const r = await learner.learn(req.body);
      return r.status === 200 ? jsonReply({ success: true }) : controllerError(r.status, r.error ?? 'error');
    },
  }];
}
