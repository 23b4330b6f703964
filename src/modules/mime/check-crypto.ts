// PGP and S/MIME parts (Rspamd rules/misc.lua BOGUS_ENCRYPTED_AND_TEXT and its virtual children):
// signed or encrypted mail is a small sign of a real correspondent, while an encrypted part next
// to readable text is a spam trick (the text carries the pitch, the "encrypted" blob the hash
// buster).
import type { MimePart, Task } from '../../plugin-api/index.js';

/** Subtypes of `application/…` leaves, matched as substrings the way Rspamd does. */
const KINDS: ReadonlyArray<[needle: string, symbol: string, encrypted: string | undefined]> = [
  ['pkcs7-mime', 'ENCRYPTED_SMIME', 'smime part'],
  ['pkcs7-signature', 'SIGNED_SMIME', undefined],
  ['pgp-encrypted', 'ENCRYPTED_PGP', 'pgp part'],
  ['pgp-signature', 'SIGNED_PGP', undefined],
];

const isText = (p: MimePart): boolean => p.contentType.type.startsWith('text/');

/**
 * Walks the direct leaf children of every multipart once (task.message.parts lists the nested
 * ones too, so no recursion is needed and the walk is linear in the part count, itself capped by
 * MAX_MIME_PARTS). Text anywhere plus an encrypted part anywhere is bogus.
 */
export function checkEncrypted(task: Task): void {
  let seenText = false;
  const encrypted = new Set<string>();
  for (const parent of task.message.parts) {
    if (!parent.isMultipart) continue;
    for (const child of parent.children) {
      if (child.isMultipart) continue;
      if (isText(child)) {
        seenText = true;
        continue;
      }
      const [major, sub = ''] = child.contentType.type.split('/', 2);
      if (major !== 'application') continue;
      for (const [needle, symbol, option] of KINDS) {
        if (!sub.includes(needle)) continue;
        task.insert(symbol);
        if (option !== undefined) encrypted.add(option);
        break;
      }
    }
  }
  if (seenText && encrypted.size > 0) task.insert('BOGUS_ENCRYPTED_AND_TEXT', 1, [...encrypted]);
}
