// Archive attachments (Rspamd's mime_types archive checks): member names get the same extension
// checks as attachment names; an archive inside an archive gives MIME_ARCHIVE_IN_ARCHIVE and an
// encrypted one MIME_ENCRYPTED_ARCHIVE. The format is taken from the bytes, not the file name.
import type { MimePart, Task } from '../../plugin-api/index.js';
import { readArchive } from './archive-read.js';
import { checkFilename, type Tables } from './check-types.js';

/**
 * Archive members checked per message. MAX_ARCHIVE_MEMBERS bounds one archive; a message of a
 * thousand archives of a thousand members each would still cost a million name checks.
 */
export const MAX_ARCHIVE_MEMBERS_PER_MESSAGE = 4000;

/** What is left of MAX_ARCHIVE_MEMBERS_PER_MESSAGE for the message being checked. */
export interface ArchiveBudget {
  members: number;
  /** Archives whose members were not all read (the caps), for the one log line a message gets. */
  cut: string[];
}

/** One log line per message when the caps left archive members unchecked. */
export function reportArchiveCuts(task: Task, budget: ArchiveBudget): void {
  if (budget.cut.length === 0) return;
  task.log.info('mime: archive members past the caps not checked', { archives: budget.cut.length, first: budget.cut.slice(0, 5), leftForMessage: budget.members });
}

function lastExtension(name: string): string | undefined {
  const base = name.slice(name.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : undefined;
}

export function checkArchive(task: Task, t: Tables, part: MimePart, index: number, budget: ArchiveBudget): void {
  if (part.isMultipart || part.isMessage || part.content.length === 0) return;
  const listing = readArchive(part.content, budget.members);
  if (!listing) return;
  const label = part.filename ?? `part ${index}`;
  budget.members -= listing.members.length;
  // Names past the caps get no extension checks: reportArchiveCuts says so.
  if (listing.truncated) budget.cut.push(label);
  if (listing.encrypted) task.insert('MIME_ENCRYPTED_ARCHIVE', 1, label);
  for (const m of listing.members) {
    if (m.name.endsWith('/')) continue; // a directory entry
    const ext = lastExtension(m.name);
    if (ext !== undefined && t.archive[ext] !== undefined) task.insert('MIME_ARCHIVE_IN_ARCHIVE', 1, `${label}:${m.name}`);
    // Member names carry no content type of their own, so only the extension checks apply.
    checkFilename(task, t, m.name.slice(m.name.lastIndexOf('/') + 1), '', index);
  }
}
