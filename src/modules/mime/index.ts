import { defineModule } from '../../plugin-api/index.js';
import { MimeConfig } from './config.js';
import { MIME_SYMBOLS } from './symbols.js';
import { makeTypesCheck } from './check-types.js';
import {
  checkAlternative,
  checkAnomalies,
  checkBase64Text,
  checkBase64TextBogus,
  checkHasAttachment,
  checkHtmlOnly,
  checkMissingDisposition,
  checkMixedBogus,
} from './check-structure.js';
import { checkEncrypted } from './check-crypto.js';
import { checkPartsDiffer } from './check-parts-differ.js';

/** MIME structure and attachment checks. */
export const mimeModule = defineModule<MimeConfig>({
  name: 'mime',
  config: MimeConfig,
  symbols: MIME_SYMBOLS,
  setup(ctx) {
    ctx.symbol({
      name: 'MIME_TYPES_CALLBACK',
      stage: 'filters',
      inserts: [
        'MIME_GOOD',
        'MIME_BAD',
        'MIME_UNKNOWN',
        'MIME_BAD_ATTACHMENT',
        'MIME_ARCHIVE_IN_ARCHIVE',
        'MIME_ENCRYPTED_ARCHIVE',
        'MIME_DOUBLE_BAD_EXTENSION',
        'MIME_BAD_EXTENSION',
        'MIME_BAD_UNICODE',
        'MIME_TRACE',
      ],
      flags: ['nostat'],
      check: makeTypesCheck(ctx.config),
    });
    ctx.symbol({ name: 'CHECK_MIME', stage: 'filters', inserts: ['MIME_MA_MISSING_TEXT', 'MIME_MA_MISSING_HTML'], check: checkAlternative });
    ctx.symbol({ name: 'MIME_HTML_ONLY', stage: 'filters', inserts: ['MIME_HTML_ONLY'], check: checkHtmlOnly });
    ctx.symbol({
      name: 'CHECK_MIME_ANOMALIES',
      stage: 'filters',
      inserts: ['BROKEN_CONTENT_TYPE', 'MIME_BAD_ENCODING', 'MIME_LIMITS_EXCEEDED'],
      check: checkAnomalies,
    });
    ctx.symbol({ name: 'CTYPE_MIXED_BOGUS', stage: 'filters', inserts: ['CTYPE_MIXED_BOGUS'], check: checkMixedBogus });
    ctx.symbol({
      name: 'CTYPE_MISSING_DISPOSITION',
      stage: 'filters',
      inserts: ['CTYPE_MISSING_DISPOSITION'],
      check: checkMissingDisposition,
    });
    ctx.symbol({ name: 'MIME_BASE64_TEXT', stage: 'filters', inserts: ['MIME_BASE64_TEXT'], check: checkBase64Text });
    ctx.symbol({ name: 'MIME_BASE64_TEXT_BOGUS', stage: 'filters', inserts: ['MIME_BASE64_TEXT_BOGUS'], check: checkBase64TextBogus });
    // Rspamd's callback is BOGUS_ENCRYPTED_AND_TEXT itself, the others its virtual children.
    ctx.symbol({
      name: 'BOGUS_ENCRYPTED_AND_TEXT',
      stage: 'filters',
      inserts: ['BOGUS_ENCRYPTED_AND_TEXT', 'ENCRYPTED_PGP', 'ENCRYPTED_SMIME', 'SIGNED_PGP', 'SIGNED_SMIME'],
      check: checkEncrypted,
    });
    ctx.symbol({ name: 'HAS_ATTACHMENT', stage: 'filters', inserts: ['HAS_ATTACHMENT'], check: checkHasAttachment });
    ctx.symbol({ name: 'R_PARTS_DIFFER', stage: 'filters', inserts: ['R_PARTS_DIFFER'], check: checkPartsDiffer });
  },
});
