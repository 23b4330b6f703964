// POST /whatif (a mailsift extension; docs/webui.md and the controller docs): how many stored
// history rows would change action under proposed thresholds and weights, and which ones. The
// body carries what /saveactions and /savesymbols would be sent, checked by the same rules, so
// a proposal that previews is one that saves:
//   {"actions": [reject, rewrite subject, add header, greylist], "symbols": [{"name", "value"}]}
// Either part may be left out. The computation is whatif-calc.ts.

import { dataRecord } from '../../core/records.js';
import type { Request } from '../../http/types.js';
import type { CoreContext } from './core-context.js';
import { actionsListing } from './config-edit.js';
import { controllerError, jsonReply } from './json.js';
import { checkSaveActions, checkSaveSymbols } from './save-checks.js';
import { withStore } from './store-outage.js';
import type { ControllerRoute } from './types.js';
import { whatif, type WhatifProposal } from './whatif-calc.js';

/** A proposal is a few KiB even with every symbol listed. */
const MAX_WHATIF_BODY_BYTES = 1024 * 1024;

type Parsed = { ok: true; value: WhatifProposal } | { ok: false; message: string };

export function parseProposal(body: Buffer, known: (symbol: string) => boolean): Parsed {
  if (body.length === 0) return { ok: false, message: 'Empty body is not permitted' };
  let doc: unknown;
  try {
    doc = JSON.parse(body.toString('utf8'));
  } catch {
    return { ok: false, message: 'Cannot parse input' };
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return { ok: false, message: 'Cannot parse input: expected {"actions": [...], "symbols": [...]}' };
  const { actions, symbols } = doc as { actions?: unknown; symbols?: unknown };
  // Keyed by symbol names from the body: no prototype.
  const p: WhatifProposal = { actions: {}, scores: dataRecord<number>() };
  if (actions !== undefined) {
    const a = checkSaveActions(actions);
    if (!a.ok) return a;
    for (const [name, v] of a.value) p.actions[name] = v;
  }
  if (symbols !== undefined) {
    const s = checkSaveSymbols(symbols, { known });
    if (!s.ok) return s;
    for (const [name, v] of s.value) p.scores[name] = v;
  }
  return { ok: true, value: p };
}

export function whatifRoutes(ctx: CoreContext): ControllerRoute[] {
  const handler = async (req: Request) => {
    if (req.method.toUpperCase() !== 'POST') return controllerError(405, 'POST a proposal');
    if (req.body.length > MAX_WHATIF_BODY_BYTES) return controllerError(413, 'Body too large');
    const known = new Set(ctx.engine.symbols().map((s) => s.name));
    const parsed = parseProposal(req.body, (name) => known.has(name));
    if (!parsed.ok) return controllerError(400, parsed.message);
    const rows = await withStore(ctx.log, 'history', () => ctx.stores.history.list(0, ctx.config.workers.controller.historyRows));
    const current = new Map(actionsListing(ctx.engine).map((a) => [a.action, a.value]));
    return jsonReply(whatif(rows, current, parsed.value));
  };
  return [{ path: '/whatif', level: 'normal', handler }];
}
