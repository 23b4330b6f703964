// Named caps on the work one message can cause. Each protects the scan budget (~2 ms CPU per
// message) and the worker's memory against a hostile or broken message; when one is hit the
// parser records an anomaly (reported by the mime module's MIME_LIMITS_EXCEEDED) and carries on
// with what it has, it never throws.

/** Nesting depth of multipart / message/rfc822 parts; stops stack exhaustion and quadratic re-scans of deep trees. */
export const MAX_MIME_DEPTH = 64;

/** Total parts in one message; stops a 10 000-part bomb from costing a part object (and a boundary scan) each. */
export const MAX_MIME_PARTS = 1024;

/** Bytes kept of one header line; a 1 MiB header would otherwise be unfolded, decoded and regexp-matched whole. */
export const MAX_HEADER_LINE_BYTES = 64 * 1024;

/** Bytes of one header block walked line by line; beyond it the rest is treated as body. Bounds the per-line loop on a block of millions of short lines. */
export const MAX_HEADER_BLOCK_BYTES = 8 * 1024 * 1024;

/** Headers kept per header block; stops a block of millions of tiny headers. */
export const MAX_HEADERS = 2048;

/** URLs kept per message; URL extraction feeds DNS-based checks, so this also bounds lookups. */
export const MAX_URLS = 1024;

/** Distinct URL-like tokens handed to linkify per message; each costs a few µs, so this bounds a token flood. */
export const MAX_URL_CANDIDATES = 4096;

/** E-mail addresses kept from bodies. */
export const MAX_BODY_EMAILS = 256;

/** Characters of one text part scanned for URLs and addresses; linkify is linear but not free. */
export const MAX_URL_SCAN_CHARS = 512 * 1024;

/** Bytes of HTML rendered per part; htmlparser2 is linear, this bounds the absolute cost. */
export const MAX_HTML_BYTES = 1024 * 1024;

/** Links and images kept per HTML part. */
export const MAX_HTML_LINKS = 1024;

/** Hidden or low-contrast text blocks kept per HTML part; the rules count up to ten. */
export const MAX_HTML_HIDDEN_BLOCKS = 256;

/** Characters of one Received value read; real ones are far shorter, this bounds the tokeniser. */
export const MAX_RECEIVED_CHARS = 4096;

/** Words and comments read from one Received value; real ones have a few dozen. Bounds a value of thousands of one-letter words. */
export const MAX_RECEIVED_TOKENS = 256;

/**
 * Received headers parsed into hops. RFC 5321 §6.3 suggests treating 100 hops as a mail loop;
 * beyond it a message of thousands of Received headers would cost a parse (and a relay check in
 * every rule that walks the chain) each.
 */
export const MAX_RECEIVED_HOPS = 100;

/**
 * Addresses kept per address header kind (From, To, Cc, Reply-To); a To: of 100 000 addresses
 * would otherwise be an object each and a loop iteration in every rule that reads recipients.
 */
export const MAX_HEADER_ADDRESSES = 1024;

/**
 * Characters of the address headers (From, To, Cc, Reply-To, in that order) handed to the
 * address parser per message: it costs up to ~2.5 µs a character on junk, and 128 headers of
 * 64 KiB junk would cost seconds yet yield no address for the cap above.
 */
export const MAX_ADDRESS_LIST_CHARS = 128 * 1024;

/**
 * RFC 2047 encoded words decoded per message (all its header blocks share it; a value decoded on
 * its own gets one of its own); each is a charset conversion. Beyond it the words stay as
 * written: a header block of 8 MiB of encoded words would take most of a second.
 */
export const MAX_ENCODED_WORDS = 2048;

/** Parameters read from one Content-Type or Content-Disposition value; real ones have a handful. Bounds 4 000 RFC 2231 sections per part. */
export const MAX_CONTENT_PARAMS = 64;

/** Bytes of HTML rendered over the whole message: 40 parts of 1 MiB HTML would each be rendered in full under the per-part cap alone. */
export const MAX_HTML_BYTES_PER_MESSAGE = 4 * 1024 * 1024;

/** Characters scanned for URLs and addresses over the whole message, for the same reason across text parts. */
export const MAX_URL_SCAN_CHARS_PER_MESSAGE = 2 * 1024 * 1024;

/**
 * Envelope recipients kept per scan request (Postfix's default smtpd_recipient_limit); the rest
 * are dropped with a log line (src/protocol/parse-v2.ts). A /checkv3 request can carry a
 * metadata list of millions; each would be parsed, matched against settings rules and written to
 * the history row.
 */
export const MAX_ENVELOPE_RCPT = 1000;

/**
 * Characters of each of the two alternative text parts split into words for R_PARTS_DIFFER (the
 * word caps of the comparison stop real text long before this); bounds the tokeniser on a part of
 * megabytes of punctuation.
 */
export const MAX_PARTS_DIFFER_CHARS = 256 * 1024;

/**
 * Cells of the word-distance table R_PARTS_DIFFER fills (words of one part × words of the other).
 * Rspamd 3.4 fills up to 4096 × 4096, ~50 ms here; beyond this bound (~1 ms, two parts of ~700
 * words) the distance is taken as the difference of the word counts, its lower bound, which the
 * table only exceeds for text that repeats the same few words over and over.
 */
export const MAX_PARTS_DIFFER_CELLS = 1 << 19;
