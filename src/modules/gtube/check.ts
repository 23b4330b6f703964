import type { ActionName, Task } from '../../plugin-api/index.js';
import type { GtubeConfig } from './config.js';

/** The pattern after its first letter; the first letter picks the action. */
const GTUBE_TAIL = 'JS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X';
/** Only the start of each text part is searched, like Rspamd: bounds the cost on huge parts. */
export const GTUBE_SCAN_BYTES = 8192;

/** Rspamd's pre-result priority for GTUBE (critical). */
const GTUBE_PRIORITY = 3;

const ACTION_BY_LETTER: Record<string, ActionName> = {
  X: 'reject',
  Y: 'add header',
  Z: 'rewrite subject',
  A: 'no action',
};

/** Returns the action the pattern found in `text` asks for, or undefined. */
export function findGtube(text: string, all: boolean): ActionName | undefined {
  const head = text.length > GTUBE_SCAN_BYTES ? text.slice(0, GTUBE_SCAN_BYTES) : text;
  let from = 0;
  for (;;) {
    const at = head.indexOf(GTUBE_TAIL, from);
    if (at < 1) {
      if (at === 0) {
        from = 1;
        continue;
      }
      return undefined;
    }
    const action = ACTION_BY_LETTER[head[at - 1] ?? ''];
    if (action === 'reject' || (action !== undefined && all)) return action;
    from = at + 1;
  }
}

export function makeGtubeCheck(config: GtubeConfig): (task: Task) => void {
  const all = config.gtube_patterns === 'all';
  return (task) => {
    for (const tp of task.message.textParts) {
      const action = findGtube(tp.utf8, all);
      if (action === undefined) continue;
      task.insert('GTUBE', 1);
      task.setFlag('skip');
      // Critical priority (3): no other pre-result may override a test pattern.
      task.setPreResult({ action, message: 'Gtube pattern', module: 'GTUBE', priority: GTUBE_PRIORITY });
      return;
    }
  };
}
