// /plugins/neural/status (a mailsift addition; Rspamd 3.4's neural plugin has only `learn`): what
// the web UI shows of each rule — the network this process has loaded, the newest version in the
// store, the training vectors collected towards the next version, and whether a training runs.
// A store that cannot be read is reported on the rule, never thrown.

import type { RuleState } from './rule-state.js';

export interface NeuralRuleStatus {
  name: string;
  symbol_spam: string;
  symbol_ham: string;
  /** Version of the network this process applies; 0: none loaded. */
  loaded_version: number;
  inputs?: number;
  hidden?: number;
  /** Newest version seen in the store (the vectors below go towards version + 1). */
  store_version: number;
  vectors?: { spam: number; ham: number };
  /** Vectors per class that start a training (train.max_trains). */
  max_trains: number;
  training: boolean;
  error?: string;
}

export async function neuralStatus(rules: readonly RuleState[]): Promise<NeuralRuleStatus[]> {
  return Promise.all(
    rules.map(async (state) => {
      const r = state.rule;
      const out: NeuralRuleStatus = {
        name: r.name,
        symbol_spam: r.symbol_spam,
        symbol_ham: r.symbol_ham,
        loaded_version: state.model?.version ?? 0,
        ...(state.model ? { inputs: state.model.net.nIn, hidden: state.model.net.nHidden } : {}),
        store_version: state.storeVersion,
        max_trains: r.train.max_trains,
        training: state.training,
      };
      try {
        const newest = await state.store.version();
        out.store_version = Math.max(out.store_version, newest);
        out.vectors = await state.store.counts(out.store_version);
      } catch (e) {
        out.error = `store not readable: ${(e as Error).message}`;
      }
      return out;
    }),
  );
}
