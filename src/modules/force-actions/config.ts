import { z } from 'zod';
import { ExpressionError, parseExpression } from '../../rule-libs/expression/composite-expr.js';

const ActionList = z.union([z.string().min(1), z.array(z.string().min(1))]).transform((v) => (Array.isArray(v) ? v : [v]));

/** One rule of `rules` (Rspamd's force_actions `rules { NAME { ... } }`). */
export const ForceActionRule = z.strictObject({
  /** Symbol expression, as composites write them: `SPF_FAIL & !DKIM_ALLOW`, `g:antivirus`, `BAYES_SPAM > 3`. */
  expression: z.string().min(1).superRefine((text, ctx) => {
    try {
      parseExpression(text);
    } catch (err) {
      if (!(err instanceof ExpressionError)) throw err;
      ctx.addIssue({ code: 'custom', message: `a symbol expression (${err.message})` });
    }
  }),
  /** The action forced when the expression holds (`reject`, `no action`, a configured custom action such as `quarantine`). */
  action: z.string().min(1),
  /** SMTP reply text (`messages.smtp_message`); `${selector}` placeholders are replaced by the selector's values, joined with `,`. */
  message: z.string().optional(),
  /** Rewrite-subject template for this message (`%s` subject, `%d` score). */
  subject: z.string().optional(),
  /** Do nothing when the action decided so far is one of these. */
  honor_action: ActionList.optional(),
  /** Act only when the action decided so far is one of these. */
  require_action: ActionList.optional(),
  /** Only raise the action to at least `action`: a stronger action chosen by the score stays. */
  least: z.boolean().default(false),
  /** Force the action but let the remaining rules run (ignored with `least`, as in Rspamd). */
  process_all: z.boolean().default(false),
  /** The expression holds when its value is above this (default 0: any present atom). */
  limit: z.number().optional(),
});
export type ForceActionRule = z.infer<typeof ForceActionRule>;

/** force_actions module options (local.d/force_actions.yaml). Without rules the module is off. */
export const ForceActionsConfig = z.strictObject({
  rules: z.record(z.string().regex(/^[A-Za-z0-9_]+$/, 'a rule name of letters, digits and _ (it names the symbol FORCE_ACTION_<name>)'), ForceActionRule).default({}),
});
export type ForceActionsConfig = z.infer<typeof ForceActionsConfig>;
