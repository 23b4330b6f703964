// Legacy SPAMC / RSPAMC lines through the proxy (proxy-milter.md §5.5): the request goes upstream
// as an ordinary /checkv2, and the scanner's JSON comes back here to be rendered in the client's
// dialect by the same renderers the normal worker uses (src/protocol/render-text.ts), so the
// bytes match a direct connection. This file only turns the JSON back into the ScanResult those
// renderers read.

import type { ActionName, MilterReply, ScanResult, SymbolResult } from '../plugin-api/scan-types.js';
import { renderRspamcText, renderSpamcText, renderTextError } from '../protocol/render-text.js';
import type { RelayResponse } from './relay-types.js';

type Json = Record<string, unknown>;

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** A /checkv2 (or v1 `default` metric) reply object → the ScanResult fields the text renderers use. */
export function scanResultFromJson(json: Json): ScanResult {
  // v1 replies (/check) keep the scalars and symbols inside `default`.
  const m: Json = isObj(json.default) ? json.default : json;
  const symbols: SymbolResult[] = [];
  const symbolSource = isObj(json.symbols) ? json.symbols : m;
  for (const [name, v] of Object.entries(symbolSource)) {
    if (!isObj(v) || (symbolSource === m && typeof v.score !== 'number')) continue;
    const s: SymbolResult = { name: str(v.name) ?? name, score: num(v.score), metricScore: num(v.metric_score ?? v.score), groups: [] };
    if (Array.isArray(v.options)) s.options = v.options.map(String);
    const d = str(v.description);
    if (d !== undefined) s.description = d;
    symbols.push(s);
  }
  const messages: Record<string, string> = {};
  if (isObj(json.messages)) for (const [k, v] of Object.entries(json.messages)) if (typeof v === 'string') messages[k] = v;
  const thresholds: Array<[ActionName, number]> = [];
  if (isObj(json.thresholds)) for (const [k, v] of Object.entries(json.thresholds)) if (typeof v === 'number') thresholds.push([k as ActionName, v]);
  const r: ScanResult = {
    isSkipped: m.is_skipped === true,
    score: num(m.score),
    requiredScore: num(m.required_score),
    action: (str(m.action) ?? 'no action') as ActionName,
    thresholds,
    symbols,
    groups: [],
    messages,
    timeReal: num(json.time_real),
    newline: '\r\n',
  };
  const subject = str(m.subject);
  if (subject !== undefined) r.subject = subject;
  const messageId = str(json['message-id']);
  if (messageId !== undefined) r.messageId = messageId;
  const milter = isObj(json.milter) ? json.milter : isObj(json.rmilter) ? json.rmilter : undefined;
  // The milter block is the wire shape of MilterReply (render-v2.ts renderMilter copies it out as is).
  if (milter) r.milter = milter as MilterReply;
  const dkim = json['dkim-signature'];
  if (typeof dkim === 'string') r.dkimSignatures = [dkim];
  else if (Array.isArray(dkim)) r.dkimSignatures = dkim.filter((x): x is string => typeof x === 'string');
  return r;
}

const headerOf = (res: RelayResponse, name: string): string | undefined => res.headers.find(([k]) => k.toLowerCase() === name)?.[1];

/** The scanner's error text of a failed reply: its `error` field, else the status line. */
function errorText(res: RelayResponse): string {
  try {
    const v: unknown = JSON.parse(res.body.toString('utf8'));
    if (isObj(v) && typeof v.error === 'string') return v.error;
  } catch {
    // not JSON: the status line says enough
  }
  return `${res.status} ${res.reason}`.trim();
}

/** The legacy reply bytes for the scanner's answer to the upgraded request. */
export function renderLegacyReply(dialect: 'spamc' | 'rspamc', res: RelayResponse): Buffer {
  if (res.status !== 200) return renderTextError(dialect, errorText(res));
  let jsonBytes = res.body;
  let block: Buffer | undefined;
  const offset = headerOf(res, 'message-offset');
  if (offset !== undefined && /^\d+$/.test(offset.trim()) && Number(offset) <= res.body.length) {
    jsonBytes = res.body.subarray(0, Number(offset));
    block = res.body.subarray(Number(offset));
  }
  let json: unknown;
  try {
    json = JSON.parse(jsonBytes.toString('utf8'));
  } catch {
    json = undefined;
  }
  if (!isObj(json)) return renderTextError(dialect, 'the scanner did not answer with a JSON result');
  const result = scanResultFromJson(json);
  const text = dialect === 'spamc' ? renderSpamcText(result) : renderRspamcText(result);
  return block && block.length > 0 ? Buffer.concat([text, block]) : text;
}
