// `fuzzy_stat` for /stat and /metrics: stored hash count per fuzzy rule's
// storage, asked over UDP (STAT). The learning endpoints belong to the fuzzy_check module
// (src/modules/fuzzy-check/endpoints.ts); this status figure is the controller's own.
import { storageCount } from '../../rule-libs/fuzzy/ops.js';
import { compileRules, type FuzzyRule } from '../../rule-libs/fuzzy/rule.js';
import { FuzzyCheckConfig } from '../../rule-libs/fuzzy/rule-config.js';
import { dataRecord } from '../../plugin-api/index.js';
import type { ControllerContext } from './types.js';

const MODULE = 'fuzzy_check';

/** The fuzzy_check rules as configured; none when the module is off or its config is unusable. */
function configuredFuzzyRules(ctx: ControllerContext): FuzzyRule[] {
  if (ctx.config.engine.disabledModules.includes(MODULE)) return [];
  const parsed = FuzzyCheckConfig.safeParse(ctx.config.engine.modules[MODULE] ?? {});
  if (!parsed.success) return [];
  try {
    return compileRules(parsed.data);
  } catch {
    return [];
  }
}

/** Per-rule stored hash count; a storage that does not answer is left out. */
export async function fuzzyStat(ctx: ControllerContext): Promise<Record<string, number>> {
  // Keyed by rule names from the config: records without a prototype (records.ts).
  const out = dataRecord<number>();
  await Promise.all(configuredFuzzyRules(ctx).map(async (rule) => {
    const n = await storageCount(rule);
    if (n !== undefined) out[rule.name] = n;
  }));
  return out;
}
