// Archive attachments (Rspamd's mime_types archive checks): member names get the same extension
// checks as attachment names; an archive inside an archive gives MIME_ARCHIVE_IN_ARCHIVE and an
// encrypted one MIME_ENCRYPTED_ARCHIVE. The format is taken from the bytes, not the file name.
import type { MimePart, Task } from '../../plugin-api/index.js';
import { readArchive } from './archive-read.js';
import { checkFilename, type Tables } from './check-types.js';

function lastExtension(name: string): string | undefined {
  const base = name.slice(name.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : undefined;
}

export function checkArchive(task: Task, t: Tables, part: MimePart, index: number): void {
  if (part.isMultipart || part.isMessage || part.content.length === 0) return;
  const listing = readArchive(part.content);
  if (!listing) return;
  const label = part.filename ?? `part ${index}`;
  if (listing.encrypted) task.insert('MIME_ENCRYPTED_ARCHIVE', 1, label);
  for (const m of listing.members) {
    if (m.name.endsWith('/')) continue; // a directory entry
    const ext = lastExtension(m.name);
    if (ext !== undefined && t.archive[ext] !== undefined) task.insert('MIME_ARCHIVE_IN_ARCHIVE', 1, `${label}:${m.name}`);
    // Member names carry no content type of their own, so only the extension checks apply.
    checkFilename(task, t, m.name.slice(m.name.lastIndexOf('/') + 1), '', index);
  }
}
