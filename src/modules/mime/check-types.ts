// Content types and attachment names (Rspamd's mime_types plugin): MIME_GOOD/BAD/UNKNOWN,
// MIME_TRACE, MIME_BAD_ATTACHMENT, MIME_BAD_EXTENSION, MIME_DOUBLE_BAD_EXTENSION,
// MIME_ARCHIVE_IN_ARCHIVE (name cloaking), MIME_BAD_UNICODE.
import type { MimePart, Task } from '../../plugin-api/index.js';
import type { MimeConfig } from './config.js';
import {
  ARCHIVE_EXTENSIONS,
  BAD_EXTENSIONS,
  EXTENSION_TYPES,
  classifyType,
} from './extensions.js';
import { checkArchive, MAX_ARCHIVE_MEMBERS_PER_MESSAGE, reportArchiveCuts, type ArchiveBudget } from './check-archives.js';

/** Bidirectional overrides and invisible characters used to disguise a file name. */
const OBSCURED_UNICODE = /[\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/u;
/** An "extension" that is really a counter or date, e.g. `report.2023.pdf`, `scan (1).exe`. */
const NUMERIC_EXT = /^\d+[\])]?$/;
/** Longest next-to-last extension treated as a real extension for double-extension checks. */
const MAX_INNER_EXT_LEN = 4;

export interface Tables {
  bad: Record<string, number>;
  archive: Record<string, number>;
  types: Record<string, number>;
}

function splitExtensions(name: string): { ext?: string; ext2?: string; pieces: number } {
  const parts = name.split('.');
  const n = parts.length;
  return {
    ext: n > 1 ? parts[n - 1]!.toLowerCase() : undefined,
    ext2: n > 2 ? parts[n - 2]!.toLowerCase() : undefined,
    pieces: n,
  };
}

export function checkFilename(task: Task, t: Tables, fname: string, ct: string, partIndex: number): void {
  const trace = (): void => task.insert('MIME_TRACE', 0, `${partIndex}:-`);
  const bad = OBSCURED_UNICODE.exec(fname);
  if (bad) {
    const cp = bad[0].codePointAt(0)!;
    task.insert('MIME_BAD_UNICODE', 1, `0x${cp.toString(16)}d after ${fname.slice(0, bad.index)}`);
  }
  let name = fname.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  name = name.replace(/[^\p{L}\p{N}\p{P}\p{S}\s]/gu, '?');
  const { ext, ext2, pieces } = splitExtensions(name);
  if (ext === undefined) return;

  const weightOf = (e: string): number | undefined => t.bad[e];
  const checkExtension = (m1: number | undefined, m2: number | undefined): void => {
    if (m1 === undefined && m2 === undefined) return;
    if (pieces > 2 && ext2 !== undefined && ext2.length <= MAX_INNER_EXT_LEN && !NUMERIC_EXT.test(ext2)) {
      const w = m1 === undefined || (m2 !== undefined && m1 < m2) ? m2! : m1;
      task.insert('MIME_DOUBLE_BAD_EXTENSION', w, `.${ext2}.${ext}`);
      trace();
      return;
    }
    if (m1 !== undefined) {
      task.insert('MIME_BAD_EXTENSION', m1, ext);
      trace();
    }
  };

  if (ext2 !== undefined) {
    checkExtension(weightOf(ext), weightOf(ext2));
    // `.zip.gz`-style cloaking; `.zip.001` split volumes are legitimate.
    if (t.archive[ext2] !== undefined && !/^\d+$/.test(ext)) {
      task.insert('MIME_ARCHIVE_IN_ARCHIVE', 1, `.${ext2}.${ext}`);
      trace();
    }
  } else {
    checkExtension(weightOf(ext), undefined);
  }

  const expected = EXTENSION_TYPES.get(ext);
  if (expected && ct && !expected.types.includes(ct)) {
    task.insert('MIME_BAD_ATTACHMENT', expected.mult, `${ext}:${ct}`);
  }
}

function checkPartType(task: Task, t: Tables, part: MimePart, index: number): void {
  // A part without Content-Type is text/plain by default, as in Rspamd; only an empty type is unknown.
  const ct = part.contentType.type;
  if (!ct) {
    task.insert('MIME_UNKNOWN', 1, 'missing content type');
    task.insert('MIME_TRACE', 0, `${index}:~`);
    return;
  }
  if (part.filename) checkFilename(task, t, part.filename, ct, index);
  const v = classifyType(ct, t.types);
  if (v === undefined) {
    task.insert('MIME_UNKNOWN', 1, ct);
    task.insert('MIME_TRACE', 0, `${index}:~`);
  } else if (v > 0) {
    task.insert('MIME_BAD', v, ct);
    task.insert('MIME_TRACE', 0, `${index}:-`);
  } else if (v < 0) {
    task.insert('MIME_GOOD', -v, ct);
    task.insert('MIME_TRACE', 0, `${index}:+`);
  } else {
    task.insert('MIME_TRACE', 0, `${index}:~`);
  }
}

export function makeTypesCheck(config: MimeConfig): (task: Task) => void {
  const t: Tables = {
    bad: { ...BAD_EXTENSIONS, ...config.bad_extensions },
    archive: { ...ARCHIVE_EXTENSIONS, ...config.archive_extensions },
    types: config.content_types,
  };
  return (task) => {
    const parts = task.message.parts;
    const budget: ArchiveBudget = { members: MAX_ARCHIVE_MEMBERS_PER_MESSAGE, cut: [] };
    for (let i = 0; i < parts.length; i++) {
      checkPartType(task, t, parts[i]!, i);
      checkArchive(task, t, parts[i]!, i, budget);
    }
    reportArchiveCuts(task, budget);
  };
}
