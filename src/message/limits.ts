// Named caps on the work one message can cause. Each protects the scan budget (~2 ms CPU per
// message) and the worker's memory against a hostile or broken message; when one is hit the
// parser records an anomaly and carries on with what it has, it never throws.

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
