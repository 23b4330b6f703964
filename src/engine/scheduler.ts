// Runs the symbols of one task stage by stage: connfilter →
// prefilters → filters → composites → postfilters → composites → idempotent, in dependency
// order. Callbacks of a stage that return a promise run concurrently; a callback that returns
// nothing costs no promise. The per-task deadline abandons whatever is still pending.
//
// Callbacks may return a promise without the `coro` flag: the scheduler awaits any thenable.
// Network calls go through task.http/dns/tcp/redis (src/net), bound to `task.signal`
// so the deadline cancels them; their awaited forms need `coro` (checked in net-scope.ts), and
// callback-form calls keep their symbol pending until they complete.
//
// `skip_process` changes nothing here: the message is parsed lazily on first use either way,
// and Rspamd 3.4's reply for it is otherwise normal. Symbols inserted by
// pre/postfilters should be declared in `inserts` so composites and settings see them.

import { DEADLINE_PASSED, withDeadline } from '../plugin-api/index.js';
import type { Stage } from '../plugin-api/index.js';
import { evaluateComposites } from './composites.js';
import type { ItemInfo } from './registry.js';
import type { ScanTask } from './task.js';

export async function runScan(task: ScanTask): Promise<void> {
  if (task.requestSkip) return;
  const core = task.core;
  if (!task.skipped) {
    for (const s of task.settings.symbols) task.insertSingle(s.name, s.weight, s.options);
  }
  for (const stage of ['connfilter', 'prefilters', 'filters'] as const) {
    if (task.skipped) break;
    await runStageInTurn(task, stage);
  }
  if (!task.skipped && !task.empty && core.composites.length > 0) evaluateComposites(core.composites, false, task, core.registry);
  if (!task.skipped) await runStageInTurn(task, 'postfilters');
  if (!task.skipped && !task.empty && core.composites.length > 0) evaluateComposites(core.composites, true, task, core.registry);
  task.finalVerdict = task.buildVerdict();
  await runStageInTurn(task, 'idempotent');
  task.stage = 'done';
}

/**
 * Runs a stage that has items once the scan's turn comes (cpu-turns.ts: the oldest ready scan of
 * the worker goes first), and waits for its pending work.
 */
async function runStageInTurn(task: ScanTask, stage: Stage): Promise<void> {
  const items = task.core.registry.stageOrder.get(stage);
  if (!items || items.length === 0) return;
  await task.core.turns.wait(task.startedAt);
  const p = runStage(task, stage);
  if (p) await p;
}

function mayStart(task: ScanTask, item: ItemInfo, stage: Stage): boolean {
  if (task.timedOut && stage !== 'idempotent' && stage !== 'postfilters') return false;
  if (stage !== 'idempotent') {
    if (task.skipped) return false;
    const bypass = item.ignorePassthrough;
    if (task.passthrough && !bypass && !(stage === 'filters' && item.fine)) return false;
    // Early exit for obvious spam unless Pass: all.
    if (stage === 'filters' && !task.passAll && !bypass && !item.fine && task.scoring.score > task.spamLimit) return false;
  }
  if (task.empty && !item.runsOnEmpty) return false;
  return true;
}

function runStage(task: ScanTask, stage: Stage): Promise<void> | undefined {
  task.stage = stage;
  const items = task.core.registry.stageOrder.get(stage);
  if (!items || items.length === 0) return undefined;
  const run = task.settings.run;
  let waits: Array<Promise<void>> | null = null;
  for (const item of items) {
    if (run[item.id] === 0 || !mayStart(task, item, stage)) continue;
    let depWait: Array<Promise<void>> | null = null;
    if (task.pending !== null) {
      for (const d of item.depIds) {
        const p = task.pending.get(d);
        if (p) (depWait ??= []).push(p);
      }
    }
    let p: Promise<void> | undefined;
    if (depWait) {
      p = Promise.all(depWait).then(() => (task.timedOut || task.finished || !mayStart(task, item, stage) ? undefined : runItem(task, item)));
      (task.pending ??= new Map()).set(item.id, p);
    } else {
      p = runItem(task, item);
    }
    if (p) (waits ??= []).push(p);
  }
  return waits ? waitWithDeadline(task, waits) : undefined;
}

function isThenable(v: unknown): v is Promise<void> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}

function runItem(task: ScanTask, item: ItemInfo): Promise<void> | undefined {
  // Always timed: /counters reports each symbol's average time (profile only adds it to the reply).
  const t0 = performance.now();
  let r: void | Promise<void>;
  const prev = task.runningItem;
  task.runningItem = item;
  try {
    r = item.check(item.asyncScope ? task.forItem(item) : task);
  } catch (err) {
    task.core.recordError(item, err, task.messageIdForLog());
    task.itemTimes[item.id] = (performance.now() - t0) / 1000;
    return undefined;
  } finally {
    task.runningItem = prev;
  }
  // Network calls made in callback form keep the symbol pending until they complete.
  const events = task.netScope?.drained(item.id);
  if (!isThenable(r)) {
    if (!events) {
      task.itemTimes[item.id] = (performance.now() - t0) / 1000;
      return undefined;
    }
    r = events;
  }
  let p: Promise<void> = r.then(() => task.netScope?.drained(item.id), (err: unknown) => task.core.recordError(item, err, task.messageIdForLog()));
  if (item.timeout !== undefined) p = withItemTimeout(task, item, p);
  const done = p.then(() => {
    task.pending?.delete(item.id);
    task.itemTimes[item.id] = (performance.now() - t0) / 1000;
  });
  (task.pending ??= new Map()).set(item.id, done);
  return done;
}

/** An item's own time budget, capped by what is left of the task deadline. */
async function withItemTimeout(task: ScanTask, item: ItemInfo, p: Promise<void>): Promise<void> {
  const ms = Math.min(item.timeout! * 1000, task.deadlineAt - performance.now());
  if (ms <= 0) return p;
  if ((await withDeadline(p, ms)) === DEADLINE_PASSED) {
    task.log.warn('symbol exceeded its time budget: abandoned', { symbol: item.name, timeout: item.timeout });
  }
}

async function waitWithDeadline(task: ScanTask, waits: Array<Promise<void>>): Promise<void> {
  const remaining = task.deadlineAt - performance.now();
  if (task.timedOut || remaining <= 0) {
    onDeadline(task);
    return;
  }
  if ((await withDeadline(Promise.all(waits), remaining)) === DEADLINE_PASSED) onDeadline(task);
}

function onDeadline(task: ScanTask): void {
  if (task.timedOut) return;
  task.timedOut = true;
  const running = task.pending ? [...task.pending.keys()].map((id) => task.core.registry.items[id]!.name) : [];
  task.pending = null;
  task.abort('task deadline passed');
  task.log.warn('task deadline passed: pending symbols abandoned', { stage: task.stage, pending: running });
}
