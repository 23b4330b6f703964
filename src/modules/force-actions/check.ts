// One force_actions rule at scan time, as Rspamd's force_actions.lua decides: read the action
// decided so far, honour `honor_action` / `require_action`, evaluate the expression against
// `limit`, then force the action with a pre-result and insert FORCE_ACTION_<name>.

import { normaliseActionName } from '../../plugin-api/index.js';
import type { PreResult, SymbolExpression, Task } from '../../plugin-api/index.js';
import type { ForceActionRule } from './config.js';
import type { CompiledMessage } from './message.js';

export const MODULE = 'force_actions';

export interface CompiledRule {
  symbol: string;
  action: string;
  expression: SymbolExpression;
  message?: CompiledMessage;
  subject?: string;
  honor?: ReadonlySet<string>;
  require?: ReadonlySet<string>;
  least: boolean;
  processAll: boolean;
  limit: number;
}

const actionSet = (list: readonly string[] | undefined): ReadonlySet<string> | undefined => (list ? new Set(list.map(normaliseActionName)) : undefined);

export function compileRule(name: string, rule: ForceActionRule, expression: SymbolExpression, message: CompiledMessage | undefined): CompiledRule {
  const r: CompiledRule = {
    symbol: `FORCE_ACTION_${name}`,
    action: normaliseActionName(rule.action),
    expression,
    least: rule.least,
    // Rspamd 3.4 reads one flag of the two (set_pre_result): `least` wins.
    processAll: rule.process_all && !rule.least,
    limit: rule.limit ?? 0,
  };
  if (message) r.message = message;
  if (rule.subject !== undefined) r.subject = rule.subject;
  const honor = actionSet(rule.honor_action);
  if (honor) r.honor = honor;
  const require = actionSet(rule.require_action);
  if (require) r.require = require;
  return r;
}

export function runRule(rule: CompiledRule, task: Task): void {
  const current = task.verdict().action;
  // Nothing to force, nothing to say: the action is already this one.
  if (rule.message === undefined && rule.subject === undefined && current === rule.action) return;
  if (rule.honor?.has(current)) return;
  if (rule.require && !rule.require.has(current)) return;
  const value = rule.expression.evaluate(task);
  if (!(value > rule.limit)) return;
  if (rule.subject !== undefined) task.setSubject(rule.subject);
  const pre: PreResult = { action: rule.action, module: MODULE };
  if (rule.least) pre.least = true;
  if (rule.processAll) pre.processAll = true;
  if (rule.message) pre.message = rule.message.render(task);
  task.setPreResult(pre);
  task.insert(rule.symbol, 1, rule.action);
}
