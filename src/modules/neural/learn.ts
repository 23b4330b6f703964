// /plugins/neural/learn: train a rule's network from vectors given in the
// request, as the next version. The body is validated here; the controller only routes to it.
// Training runs after the reply (`{"success": true}`), as in Rspamd.

import { z } from 'zod';
import type { Logger } from '../../plugin-api/index.js';
import type { Sample } from './mlp.js';
import type { RuleState } from './rule-state.js';
import { fromDense } from './vector.js';

/** Vectors one request may carry (per class): bounds the memory and CPU of one training. */
export const MAX_LEARN_VECTORS = 20_000;

const LearnBody = z.strictObject({
  spam_vec: z.array(z.array(z.number())).max(MAX_LEARN_VECTORS),
  ham_vec: z.array(z.array(z.number())).max(MAX_LEARN_VECTORS),
  rule: z.string().optional(),
});

export interface LearnReply {
  status: number;
  /** Error text for a status other than 200. */
  error?: string;
}

/** What the controller calls: the rules of the engine it runs. */
export interface NeuralLearner {
  learn(body: Buffer): Promise<LearnReply>;
}

export function neuralLearner(rules: ReadonlyMap<string, RuleState>, log: Logger): NeuralLearner {
  return {
    async learn(body: Buffer): Promise<LearnReply> {
      if (body.length === 0) return { status: 400, error: 'Empty body is not permitted' };
      let json: unknown;
      try {
        json = JSON.parse(body.toString('utf8'));
      } catch (e) {
        return { status: 400, error: `cannot parse JSON: ${(e as Error).message}` };
      }
      const parsed = LearnBody.safeParse(json);
      if (!parsed.success) {
        const i = parsed.error.issues[0]!;
        return { status: 400, error: `invalid request: ${i.path.join('.') || '(root)'}: ${i.message}` };
      }
      const name = parsed.data.rule ?? 'default';
      const state = rules.get(name);
      if (!state) return { status: 400, error: `unknown rule: ${name}` };
      const n = state.profile.length;
      const samples: Sample[] = [];
      for (const [cls, vecs] of [['spam_vec', parsed.data.spam_vec], ['ham_vec', parsed.data.ham_vec]] as const) {
        for (let i = 0; i < vecs.length; i++) {
          if (vecs[i]!.length !== n) return { status: 400, error: `invalid request: ${cls}.${i}: ${vecs[i]!.length} values, the rule's vectors have ${n}` };
          samples.push({ x: fromDense(vecs[i]!), y: cls === 'spam_vec' ? 1 : -1 });
        }
      }
      const min = Math.ceil(state.rule.train.max_trains / 2);
      if (samples.length < min) return { status: 400, error: `not enough vectors: ${samples.length}, at least ${min} needed` };
      if (state.training) return { status: 409, error: 'a training of this rule is already running' };
      let version: number;
      try {
        version = Math.max(state.storeVersion, await state.store.version()) + 1;
      } catch (e) {
        return { status: 503, error: `store unavailable: ${(e as Error).message}` };
      }
      void state.train(samples, version).then(
        (out) => {
          if ('refused' in out) log.warn('neural: learn request not trained', { rule: name, reason: out.refused });
        },
        (e: unknown) => log.warn('neural: training of a learn request failed', { rule: name, error: (e as Error).message }),
      );
      return { status: 200 };
    },
  };
}
