import { loadArc, loadDkimVerify } from '../../module-helpers/mailauth-libs.js';
import type { Task } from '../../plugin-api/index.js';
import { authInput, MAX_ARC_SETS } from '../../module-helpers/auth-message.js';
import { AUTH_CACHE, authOutcome, trackedResolver } from '../../module-helpers/auth-results.js';
import type { ArcOutcome, AuthResultValue } from '../../module-helpers/auth-results.js';
import type { ArcConfig } from './config.js';

/** mailauth's comments for a chain that is malformed (as opposed to one whose signatures fail). */
const STRUCTURE_ERROR = /no arc-[a-z-]+ set|cv=|arc count|instance|missing|unexpected|h value|multiple/i;

export function makeArcCheck(config: ArcConfig): (task: Task) => Promise<void> {
  return async (task) => {
    if (task.meta.raw) return;
    if (!task.message.headers.has('arc-seal')) {
      task.cache.set(AUTH_CACHE.arc, { result: 'none', info: 'arc=none' } satisfies ArcOutcome);
      task.insert('ARC_NA');
      return;
    }
    const input = authInput(task);
    if (input.arcDropped) {
      // RFC 8617 §5.2: past 50 sets the chain fails without a check (a seal covers every set
      // before it, so verifying thousands would be quadratic). A set whose timestamp is no time
      // cannot verify either (and mailauth would throw on it): the chain is invalid.
      const text = input.arcUnusable ?? `${input.arcSets} ARC sets, more than the ${MAX_ARC_SETS} RFC 8617 allows; not checked`;
      task.cache.set(AUTH_CACHE.arc, { result: 'fail', info: 'arc=fail' } satisfies ArcOutcome);
      task.insert('ARC_INVALID', 1, text);
      task.log.info(`arc: ${text}`, { sets: input.arcSets });
      return;
    }
    const resolver = trackedResolver(task);
    // The DKIM check's parse carries the ARC chain and the verified AMS; parse again only if it did not run.
    let data = authOutcome(task, 'dkim')?.arc;
    // The DKIM check skipped its parse (no DKIM-Signature): the ARC chain still needs one.
    const [{ arc }, { dkimVerify }] = await Promise.all([loadArc(), loadDkimVerify()]);
    if (data === undefined) data = (await dkimVerify(input.raw, { resolver: resolver as never, minBitLength: config.min_key_bits })).arc;
    const r = await arc(data as never, { resolver: resolver as never, minBitLength: config.min_key_bits });
    const result = r.status.result as AuthResultValue;
    const comment = String(r.status.comment ?? '');
    const outcome: ArcOutcome = { result, info: r.info ?? `arc=${result}` };
    task.cache.set(AUTH_CACHE.arc, outcome);
    const option = r.i ? `i=${r.i}` : undefined;
    if (result === 'pass') task.insert('ARC_ALLOW', 1, option);
    else if (result === 'none') task.insert('ARC_NA');
    else if (resolver.tempfail) task.insert('ARC_DNSFAIL', 1, comment || option);
    else if (STRUCTURE_ERROR.test(comment)) task.insert('ARC_INVALID', 1, comment);
    else task.insert('ARC_REJECT', 1, comment || option);
  };
}
