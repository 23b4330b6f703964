// /actions, /symbols, /saveactions, /savesymbols. Saved values go
// to the KvStore as the dynamic configuration document and take effect at once in this
// process; every other worker applies them on its next poll (workers/dynamic-config.ts).
//
// Deliberate differences from 3.4: a value equal to the *configured* one removes the
// override (3.4 compares with the current, possibly overridden, value, so saving the same
// numbers twice silently reverted them to the configuration); and a body is checked whole
// before anything is saved (save-checks.ts): a non-numeric, infinite, negative or
// out-of-order threshold, an unknown symbol or a missing score is a 400 naming it, where 3.4
// saved 0 or skipped the element and answered success.

import type { Engine } from '../../engine/index.js';
import type { Request } from '../../http/types.js';
import { readDynamicConf, saveDynamicConf, toOverrides, type DynamicConfDoc } from '../dynamic-config.js';
import { controllerError, dbl, jsonReply, successReply } from './json.js';
import { isStoreUnavailable, storeUnavailable } from './store-outage.js';
import { checkSaveActions, checkSaveSymbols } from './save-checks.js';
import type { ControllerContext, ControllerRoute } from './types.js';

/** Every action /actions lists, whether configured or not. */
const KNOWN_ACTIONS = ['reject', 'soft reject', 'rewrite subject', 'add header', 'greylist', 'no action'];
/** A score change smaller than this is no change (3.4's savesymbols threshold). */
const SCORE_EPSILON = 0.01;
/** Body of a save request; a real one is a few KiB even with every symbol listed. */
export const MAX_SAVE_BODY_BYTES = 1024 * 1024;

function parseJsonBody(req: Request): { ok: true; value: unknown } | { ok: false; reply: ReturnType<typeof controllerError> } {
  if (req.body.length === 0) return { ok: false, reply: controllerError(400, 'Empty body is not permitted') };
  if (req.body.length > MAX_SAVE_BODY_BYTES) return { ok: false, reply: controllerError(413, 'Body too large') };
  try {
    return { ok: true, value: JSON.parse(req.body.toString('utf8')) };
  } catch {
    return { ok: false, reply: controllerError(400, 'Cannot parse input') };
  }
}

/** `[{action, value}]` sorted by threshold, thresholdless last. */
export function actionsListing(engine: Engine): Array<{ action: string; value: number | null }> {
  const byName = new Map<string, number | null>();
  for (const a of engine.actions()) byName.set(a.name, a.threshold);
  for (const n of KNOWN_ACTIONS) if (!byName.has(n)) byName.set(n, null);
  const withValue = [...byName].filter(([, v]) => v !== null) as Array<[string, number]>;
  withValue.sort((a, b) => a[1] - b[1]);
  const without = [...byName].filter(([, v]) => v === null);
  return [...withValue, ...without].map(([action, value]) => ({ action, value }));
}

function symbolsListing(engine: Engine): unknown[] {
  const groups = new Map<string, unknown[]>();
  for (const s of engine.symbols()) {
    let rules = groups.get(s.group);
    if (!rules) groups.set(s.group, (rules = []));
    // frequency/time are per-symbol scan statistics; not collected yet, so 0 as for an idle Rspamd.
    rules.push({ symbol: s.name, weight: dbl(s.score), description: s.description, frequency: dbl(0), frequency_stddev: dbl(0), time: dbl(0) });
  }
  return [...groups].map(([group, rules]) => ({ group, rules }));
}

async function persist(ctx: ControllerContext, doc: DynamicConfDoc): Promise<boolean> {
  try {
    await saveDynamicConf(ctx.stores.kv, doc);
  } catch (err) {
    // The store is down: 503, the change may be made again later (anything else: Save error).
    if (isStoreUnavailable(err)) throw storeUnavailable(ctx.log, 'configuration', err);
    ctx.log.error('cannot save the dynamic configuration', { error: (err as Error).message });
    return false;
  }
  ctx.engine.applyOverrides(toOverrides(doc));
  return true;
}

async function saveActions(ctx: ControllerContext, req: Request) {
  const parsed = parseJsonBody(req);
  if (!parsed.ok) return parsed.reply;
  const checked = checkSaveActions(parsed.value);
  if (!checked.ok) return controllerError(400, checked.message);
  const doc = await readForSave(ctx);
  if (!doc) return controllerError(500, 'Save error');
  for (const [name, value] of checked.value) {
    if (value === ctx.engine.configuredThreshold(name)) delete doc.actions[name];
    else doc.actions[name] = value;
  }
  return (await persist(ctx, doc)) ? successReply() : controllerError(500, 'Save error');
}

/** The saved runtime configuration, or undefined (logged) when the store cannot be read. */
async function readForSave(ctx: ControllerContext): Promise<DynamicConfDoc | undefined> {
  try {
    return await readDynamicConf(ctx.stores.kv);
  } catch (err) {
    if (isStoreUnavailable(err)) throw storeUnavailable(ctx.log, 'configuration', err);
    ctx.log.error('cannot read the dynamic configuration', { error: (err as Error).message });
    return undefined;
  }
}

async function saveSymbols(ctx: ControllerContext, req: Request) {
  const parsed = parseJsonBody(req);
  if (!parsed.ok) return parsed.reply;
  const current = new Map(ctx.engine.symbols().map((s) => [s.name, s.score]));
  const checked = checkSaveSymbols(parsed.value, { known: (name) => current.has(name) });
  if (!checked.ok) return controllerError(400, checked.message);
  const doc = await readForSave(ctx);
  if (!doc) return controllerError(500, 'Save error');
  let changes = 0;
  for (const [name, n] of checked.value) {
    const configured = ctx.engine.configuredScore(name)!;
    if (Math.abs(configured - n) <= SCORE_EPSILON) {
      if (Object.hasOwn(doc.scores, name)) {
        delete doc.scores[name];
        changes++;
      }
    } else if (Math.abs(current.get(name)! - n) > SCORE_EPSILON) {
      doc.scores[name] = n;
      changes++;
    }
  }
  if (changes === 0) return controllerError(404, 'No symbols to save');
  return (await persist(ctx, doc)) ? successReply() : controllerError(500, 'Save error');
}

export function configEditRoutes(ctx: ControllerContext): ControllerRoute[] {
  return [
    { path: '/actions', level: 'normal', handler: () => jsonReply(actionsListing(ctx.engine).map((a) => ({ action: a.action, value: a.value === null ? null : dbl(a.value) }))) },
    { path: '/symbols', level: 'normal', handler: () => jsonReply(symbolsListing(ctx.engine)) },
    { path: '/saveactions', level: 'enable', handler: (req) => saveActions(ctx, req) },
    { path: '/savesymbols', level: 'enable', handler: (req) => saveSymbols(ctx, req) },
  ];
}
