// Date and Message-ID checks (Rspamd DATE_CB, MISSING_MID, CHECK_MID).
import { getDomain } from 'tldts';
import type { Task } from '../../plugin-api/index.js';
import type { HeadersConfig } from './config.js';

const SECONDS_PER_HOUR = 3600;

export function makeDateCheck(config: HeadersConfig): (task: Task) => void {
  return (task) => {
    const hdr = task.message.headers.first('date');
    if (!hdr || hdr.value === '') {
      task.insert('MISSING_DATE');
      return;
    }
    const date = task.message.date;
    if (!date || Number.isNaN(date.getTime())) {
      task.insert('INVALID_DATE');
      return;
    }
    const diff = (Date.now() - date.getTime()) / 1000;
    if (diff > config.date_past_seconds) {
      task.insert('DATE_IN_PAST', 1, String(Math.floor(diff / SECONDS_PER_HOUR)));
    } else if (-diff > config.date_future_seconds) {
      task.insert('DATE_IN_FUTURE', 1, String(Math.floor(-diff / SECONDS_PER_HOUR)));
    }
  };
}

export function checkMissingMid(task: Task): void {
  if (!task.message.headers.has('message-id')) task.insert('MISSING_MID');
}

const MID_BARE_IP = /@\d+\.\d+\.\d+\.\d+>$/;
const MID_NOT_FQDN = /@[^.]+>?$/;
const MID_BRACKETED = /^<[^>]+>$/;
const MID_IP_LITERAL = /@\[\d+\.\d+\.\d+\.\d+\]/;
const MID_RHS = /@([^>]+)>?$/;

export function checkMid(task: Task): void {
  const mid = task.message.headers.first('message-id')?.value;
  if (mid === undefined) return;
  if (MID_BARE_IP.test(mid)) task.insert('MID_BARE_IP');
  if (MID_NOT_FQDN.test(mid)) task.insert('MID_RHS_NOT_FQDN');
  if (!MID_BRACKETED.test(mid)) task.insert('MID_MISSING_BRACKETS');
  if (MID_IP_LITERAL.test(mid)) task.insert('MID_RHS_IP_LITERAL');
  const lmid = mid.toLowerCase();
  const rhs = MID_RHS.exec(mid)?.[1]?.toLowerCase();
  const from = task.message.from[0];
  let fromDomain: string | undefined;
  if (from && from.domain) {
    fromDomain = from.domain.toLowerCase();
    if (from.address && lmid.includes(from.address.toLowerCase())) {
      task.insert('MID_CONTAINS_FROM');
    } else if (rhs !== undefined && rhs === fromDomain) {
      task.insert('MID_RHS_MATCH_FROM');
    } else if (rhs !== undefined) {
      const a = getDomain(rhs);
      if (a && a === getDomain(fromDomain)) task.insert('MID_RHS_MATCH_FROMTLD');
    }
  }
  const to = task.message.to[0] ?? task.message.cc[0];
  if (to && to.domain) {
    const toDomain = to.domain.toLowerCase();
    if (fromDomain === undefined || fromDomain !== toDomain) {
      if (to.address && lmid.includes(to.address.toLowerCase())) task.insert('MID_CONTAINS_TO');
      else if (rhs !== undefined && rhs === toDomain) task.insert('MID_RHS_MATCH_TO');
    }
  }
}
