// Every symbol the mime module can insert. Scores, groups and descriptions are Rspamd 3.4's
// (conf/scores.d/mime_types_group.conf, rules/headers_checks.lua, rules/misc.lua, rules/regexp/headers.lua);
// the MIME_*_ENCODING/LIMITS ones are mailsift's own, for parser anomalies Rspamd has no name for.
import type { SymbolDef } from '../../plugin-api/index.js';

const mt = (score: number, description?: string): SymbolDef => ({ score, group: 'mime_types', description, oneShot: true });

export const MIME_SYMBOLS: Record<string, SymbolDef> = {
  MIME_GOOD: mt(-0.1, 'Known content-type'),
  MIME_BAD: mt(1.0, 'Known bad content-type'),
  MIME_UNKNOWN: mt(0.1, 'Missing or unknown content-type'),
  MIME_BAD_ATTACHMENT: mt(4.0, 'Invalid attachment mime type'),
  MIME_ARCHIVE_IN_ARCHIVE: mt(5.0, 'Archive within another archive'),
  MIME_ENCRYPTED_ARCHIVE: mt(2.0, 'Encrypted archive in a message'),
  MIME_DOUBLE_BAD_EXTENSION: mt(3.0, 'Bad extension cloaking'),
  MIME_BAD_EXTENSION: mt(2.0, 'Bad extension'),
  MIME_BAD_UNICODE: mt(8.0, 'Filename with known obscured unicode characters'),
  // Rspamd lists MIME_TRACE without a description.
  MIME_TRACE: { score: 0, group: 'mime_types' },
  MIME_MA_MISSING_TEXT: { score: 2.0, group: 'headers', description: 'MIME multipart/alternative missing text/plain part' },
  MIME_MA_MISSING_HTML: { score: 1.0, group: 'headers', description: 'MIME multipart/alternative missing text/html part' },
  MIME_HTML_ONLY: { score: 0.2, group: 'headers', description: 'Messages that have only HTML part' },
  BROKEN_CONTENT_TYPE: { score: 1.5, group: 'headers', description: 'Message has part with broken content type' },
  CTYPE_MIXED_BOGUS: { score: 1.0, group: 'mime', description: 'multipart/mixed without non-textual part' },
  CTYPE_MISSING_DISPOSITION: { score: 4.0, group: 'mime', description: 'Binary content-type not specified as an attachment' },
  MIME_BAD_ENCODING: { score: 1.0, group: 'mime', description: 'Part with broken base64 or quoted-printable encoding' },
  MIME_BASE64_TEXT: { score: 0.1, group: 'mime', description: 'Has text part encoded in base64' },
  MIME_BASE64_TEXT_BOGUS: { score: 1.0, group: 'mime', description: 'Has text part encoded in base64 that does not contain any 8bit characters' },
  // rules/misc.lua
  BOGUS_ENCRYPTED_AND_TEXT: { score: 10.0, group: 'mime_types', description: 'Bogus mix of encrypted and text/html payloads' },
  ENCRYPTED_PGP: mt(-0.5, 'Message is encrypted with pgp'),
  ENCRYPTED_SMIME: mt(-0.5, 'Message is encrypted with smime'),
  SIGNED_PGP: mt(-2.0, 'Message is signed with pgp'),
  SIGNED_SMIME: mt(-2.0, 'Message is signed with smime'),
  HAS_ATTACHMENT: { score: 0, group: 'body', description: 'Message contains attachments' },
  R_PARTS_DIFFER: { score: 1.0, group: 'body', description: 'Text and HTML parts differ' },
  MIME_LIMITS_EXCEEDED: { score: 1.0, group: 'mime', description: 'Message exceeds a parser limit (depth, parts, headers, addresses, encoded words, URLs, text size); the rest was not parsed' },
};
