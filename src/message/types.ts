// The parsed shape of one e-mail message. Produced by `parseMessage` (parse-message.ts);
// read by the engine and by modules through `task.message`. Everything here is plain data
// computed once per message; nothing holds a reference back to the parser.

export interface MessageHeader {
  /** Header name as written in the message (original case). */
  name: string;
  /** Lower-case name, for lookups. */
  key: string;
  /** Raw value bytes as latin1 string: everything after the colon, folding kept, no trailing newline. */
  raw: string;
  /** Unfolded value with RFC 2047 encoded words decoded to UTF-8, surrounding whitespace trimmed. */
  value: string;
  /** Position of this header in the header block (0-based). */
  order: number;
  /** true when the value had 8-bit bytes that are not valid UTF-8, or the header line was malformed. */
  broken?: boolean;
}

/** Ordered header list with case-insensitive lookup; duplicates kept. */
export interface HeaderList {
  readonly all: readonly MessageHeader[];
  /** Every header with this name (case-insensitive), in message order. */
  get(name: string): MessageHeader[];
  /** First header with this name, or undefined. */
  first(name: string): MessageHeader | undefined;
  has(name: string): boolean;
}

export interface ContentType {
  /** Lower-case `type/subtype`; `text/plain` when absent. */
  type: string;
  /** Lower-case parameter names → values (RFC 2231 continuations and charsets decoded). */
  params: Record<string, string>;
  /** true when the header was present but could not be parsed. */
  invalid?: boolean;
  /** More than MAX_CONTENT_PARAMS parameters: the rest were not read. */
  tooManyParams?: boolean;
}

export interface MimePart {
  /** Dotted path in the tree, '1', '1.2', … ; the root is ''. */
  id: string;
  headers: HeaderList;
  contentType: ContentType;
  /** Lower-case Content-Transfer-Encoding (`7bit` when absent). */
  transferEncoding: string;
  /** `inline` / `attachment` / '' when absent. */
  disposition: string;
  /** File name from Content-Disposition or Content-Type `name`, decoded. */
  filename?: string;
  /** Decoded (transfer-encoding undone) content bytes; empty for multiparts. */
  content: Buffer;
  /** Size of the raw (still encoded) content in bytes. */
  rawSize: number;
  children: MimePart[];
  parent?: MimePart;
  /** Depth in the tree, root = 0. */
  depth: number;
  isMultipart: boolean;
  /** message/rfc822 part: its body is parsed as a nested message into children[0]. */
  isMessage: boolean;
  isAttachment: boolean;
  /** Problems found in this part (see MimeAnomaly). */
  anomalies: MimeAnomaly[];
}

export interface TextPart {
  part: MimePart;
  /** `plain` or `html`. */
  kind: 'plain' | 'html';
  /** Charset declared (lower-case) or undefined. */
  charset?: string;
  /** Content converted to UTF-8 (for HTML: the source, not the rendered text). */
  utf8: string;
  /** Visible text: the plain text, or HTML rendered to text. Whitespace runs collapsed. */
  text: string;
  /** true when the declared charset was unknown or the bytes were invalid for it. */
  badCharset: boolean;
  /** For HTML parts: facts gathered while rendering. */
  html?: HtmlFacts;
  /** Number of text lines. */
  lines: number;
  /** true when empty after trimming. */
  empty: boolean;
}

export interface HtmlFacts {
  /** Tag names seen (lower-case). */
  tags: Set<string>;
  /** Links: href target and the displayed text; `tag` is set for an <area> (else an <a>). */
  links: Array<{ href: string; text: string; tag?: 'area' }>;
  images: string[];
  /** HTML could not be parsed cleanly (unbalanced tags etc.). */
  unbalanced: boolean;
  /** Every <img> with its declared size (0 when absent) and whether it sits inside an <a> link. */
  imageTags?: HtmlImage[];
  /** `href` of every <link> element (stylesheets and the like). */
  linkTags?: string[];
  /** The HTML was longer than the renderer reads (MAX_HTML_BYTES or the message's budget): the rest was not rendered. */
  truncated?: boolean;
  /** More links, images or <link> elements than MAX_HTML_LINKS: the rest were not kept. */
  linksTruncated?: boolean;
  /**
   * Innermost elements (no child elements) among font, span, div, p and td holding text a reader
   * can't see or can hardly see: hidden, zero-sized or drawn in its background's colour. At most
   * MAX_HTML_HIDDEN_BLOCKS, in document order.
   */
  hiddenBlocks?: HtmlHiddenBlock[];
  /** Characters of text left out of the part's text because no reader sees them. */
  hiddenChars?: number;
}

/** One element whose text is hidden or low-contrast (see HtmlFacts.hiddenBlocks). */
export interface HtmlHiddenBlock {
  tag: string;
  /** Non-blank characters of text inside it. */
  chars: number;
  /** Not shown (display:none, visibility:hidden, opacity near 0, the hidden attribute, a zero font): its text is not in the part's text. */
  hidden: boolean;
  /** Font size under one pixel. */
  zeroFont: boolean;
  /** Shown, but see-through or in (nearly) its background's colour: its text is in the part's text. */
  transparent: boolean;
  /** Text and background colour as `#rrggbb`. */
  color: string;
  background: string;
}

export interface HtmlImage {
  src: string;
  width: number;
  height: number;
  /** The image is inside an <a href> (a clickable image). */
  linked: boolean;
  /** `cid:` or `data:` source: the image travels with the message. */
  embedded: boolean;
}

export interface Attachment {
  part: MimePart;
  filename?: string;
  contentType: string;
  size: number;
}

export interface EmailAddress {
  /** Display name, decoded. */
  name: string;
  /** `local@domain`, as found; domain lower-cased. */
  address: string;
  local: string;
  domain: string;
  /** true when the text could not be parsed as an address. */
  invalid?: boolean;
}

export interface FoundUrl {
  /** Normalised URL (schemaless URLs get `http://`). */
  url: string;
  scheme: string;
  /** Host, lower-cased, IDN converted to Unicode form kept as found in punycode in `hostAscii`. */
  host: string;
  hostAscii: string;
  /** Registrable domain (eTLD+1), when the host has a known public suffix. */
  tld?: string;
  /** Where and how it was found: `text`, `html_displayed`, `schemaless`, `numeric`, `subject`, `image`, … */
  flags: Set<string>;
  /** For HTML links whose visible text is itself a URL: that displayed URL. */
  displayed?: string;
  isEmail: boolean;
  /**
   * Occurrences as Rspamd 3.4 counts them (its url:get_count()): each time a text shows it, each
   * link or image naming it, and a link text showing it. 0 while Rspamd's scanner would not have
   * found it: a bare host name (no scheme, no `www.`) in an HTML part's text or in a part of a
   * two-part multipart, which Rspamd reads strictly.
   */
  count: number;
  /**
   * The flags of Rspamd's own record of the URL, which its URL filters read: those of its first
   * counted sighting (`text`, `image`, `subject`, a link's own oddities, or none for a plain
   * link), changed only where Rspamd changes them (a link text showing the URL: `url_displayed`
   * on the link, `html_displayed` on a URL first seen in text). `flags` gathers every sighting's.
   */
  firstFlags: Set<string>;
}

/** Structural problems a parse can find; each maps to a symbol in the mime module. */
export type MimeAnomaly =
  | 'missing_boundary' // multipart without a boundary parameter
  | 'boundary_not_found' // declared boundary never appears in the body
  | 'no_closing_boundary' // multipart not terminated by --boundary--
  | 'bad_transfer_encoding' // unknown Content-Transfer-Encoding
  | 'bad_base64' // base64 content with invalid characters or length
  | 'bad_qp' // quoted-printable with broken escapes
  | 'bad_charset' // unknown charset
  | 'invalid_content_type' // Content-Type present but unparsable
  | 'too_deep' // nesting limit reached; deeper parts not parsed
  | 'too_many_parts' // part limit reached; later parts not parsed
  | 'header_too_long' // a header line over the limit was truncated
  | 'no_headers' // the input has no header block at all
  | 'eight_bit_header' // raw 8-bit bytes in a header
  | 'too_many_urls' // URL limit reached; later URLs not collected
  | 'too_many_headers' // header count limit reached; later headers of that block dropped
  | 'too_many_received' // more Received headers than MAX_RECEIVED_HOPS; the rest not parsed into hops
  | 'received_too_long' // a Received header over MAX_RECEIVED_CHARS / MAX_RECEIVED_TOKENS; its rest not read
  | 'too_many_addresses' // an address header kind over MAX_HEADER_ADDRESSES / MAX_ADDRESS_LIST_CHARS; the rest not parsed
  | 'too_many_encoded_words' // MAX_ENCODED_WORDS decoded; later encoded words left as written
  | 'too_many_params' // a Content-Type/-Disposition with more than MAX_CONTENT_PARAMS parameters; the rest not read
  | 'html_too_long' // HTML beyond MAX_HTML_BYTES (per part) or MAX_HTML_BYTES_PER_MESSAGE not rendered
  | 'url_scan_truncated'; // text beyond the URL-scan caps (chars, candidates) not searched for URLs and addresses

export interface Message {
  /** The message bytes as scanned (after an mbox `From ` line and leading whitespace were skipped). */
  raw: Buffer;
  /** Newline style of the header block. */
  newline: '\r\n' | '\n';
  headers: HeaderList;
  /** Byte offset where the body starts (after the blank line), raw.length when there is no body. */
  bodyOffset: number;
  root: MimePart;
  /** Every part in tree order (depth-first), root first. */
  parts: MimePart[];
  textParts: TextPart[];
  attachments: Attachment[];
  urls: FoundUrl[];
  /** E-mail addresses found in the body text (not headers). */
  emails: EmailAddress[];
  subject?: string;
  /** Message-ID without angle brackets. */
  messageId?: string;
  from: EmailAddress[];
  to: EmailAddress[];
  cc: EmailAddress[];
  replyTo: EmailAddress[];
  date?: Date;
  /** Every anomaly found in any part, de-duplicated. */
  anomalies: Set<MimeAnomaly>;
}

/** One parsed `Received:` header (parse-received.ts). Index 0 is the top-most (latest) hop. */
export interface ReceivedHop {
  raw: string;
  /** Name the sending host gave (HELO), from `from <helo>`. */
  fromHelo?: string;
  /** Reverse-DNS name of the sending host as recorded by the receiver. */
  fromHostname?: string;
  /** Sending host address (IPv4 or IPv6, normalised), when recorded. */
  fromIp?: string;
  /**
   * The sender as Rspamd 3.4 reads it (its `real_ip` / `real_hostname`): only the first comment
   * of the `from` clause, then the clause's words. A request without a client IP takes its IP
   * and host name from these fields of the top hop (src/engine/received-client.ts). The name is
   * only the Postfix form's reverse name (`(name [ip])`, `unknown` is none); Exim's leading
   * name is not one, as in Rspamd.
   */
  realIp?: string;
  realHostname?: string;
  /** Receiving host (`by <host>`). */
  by?: string;
  /** `with` protocol, upper-cased: SMTP, ESMTP, ESMTPS, ESMTPSA, LMTP, HTTP, LOCAL, … */
  protocol?: string;
  /** `for <addr>` recipient. */
  for?: string;
  /** `id <queue-id>` the receiver gave the message. */
  id?: string;
  timestamp?: Date;
  /** true when the protocol says TLS was used (ESMTPS, ESMTPSA, UTF8SMTPS, or a `(using TLS…)` comment). */
  tls: boolean;
  /** true when the protocol says the sender authenticated (ESMTPA, ESMTPSA, LMTPA, …). */
  authenticated: boolean;
  /** true when the header could not be understood at all. */
  unparsed: boolean;
  /** The value was longer than the parser reads (MAX_RECEIVED_CHARS / MAX_RECEIVED_TOKENS): the rest was not read. */
  truncated?: boolean;
}
