// The selector cases checked against Rspamd 3.4's answers (recorded by
// record-rspamd-expectations.ts into rspamd-3.4-expectations.json). A message case runs one
// selector over one message with the given request headers (as /plugins/selectors/check_message
// does); a parse case only asks whether a selector string is valid.

import { join } from 'node:path';

export interface MessageCase {
  id: string;
  message: 'attachments.eml' | 'html-links.eml';
  selector: string;
  headers?: Record<string, string>;
}

export interface ParseCase {
  id: string;
  selector: string;
}

export interface RecordedReply {
  status: number;
  body: unknown;
}

export interface RecordedFile {
  recordedWith: string;
  command: string;
  /** GET list_extractors / list_transforms: each function's listing without its argument schema dump. */
  lists: {
    extractors: Record<string, { description: string }>;
    transforms: Record<string, { description: string; types: Record<string, boolean>; map_type?: string }>;
  };
  message: Record<string, RecordedReply>;
  parse: Record<string, { check: RecordedReply; message: RecordedReply }>;
}

export function messagePath(name: string): string {
  return join(import.meta.dirname, 'messages', name);
}

/** The envelope most cases are scanned with. */
export const ENVELOPE: Record<string, string> = {
  IP: '198.51.100.7',
  Helo: 'mx.relay.example.net',
  From: 'Bounce@Lists.Example.org',
  Rcpt: 'alice@example.com',
  User: 'submitter',
  'Queue-Id': 'QID123ABC',
  'Deliver-To': 'alice+box@example.com',
  'X-Test-Header': 'request header value',
};

const A = 'attachments.eml' as const;
const H = 'html-links.eml' as const;

/** [id, message, selector, headers?] rows, expanded below. */
const ROWS: Array<[string, MessageCase['message'], string, Record<string, string>?]> = [
  // extractors
  ['id-arg', A, "id('foo')"],
  ['id-empty', A, 'id'],
  ['list-args', A, "list('a','b', c)"],
  ['list-empty', A, 'list'],
  ['ip', A, 'ip'],
  ['ip-none', A, 'ip', {}],
  ['ip-v6-mask', A, 'ip.ipmask(24, 64)', { IP: '2001:db8:1:2:3:4:5:6' }],
  ['ip-mask', A, 'ip.ipmask(24)'],
  ['from-any', A, 'from'],
  ['from-smtp-addr', A, "from('smtp'):addr"],
  ['from-mime', A, "from('mime')"],
  ['from-mime-name', A, "from('mime'):name"],
  ['from-mime-domain', A, "from('mime'):domain"],
  ['from-mime-user', A, "from('mime'):user"],
  ['from-no-envelope', A, 'from:addr', {}],
  ['from-smtp-missing', A, "from('smtp')", {}],
  ['from-domain-lower', A, "from('mime'):domain.lower"],
  ['rcpts-any', A, 'rcpts:addr'],
  ['rcpts-mime', A, "rcpts('mime'):addr"],
  ['rcpts-mime-domain', A, "rcpts('mime'):domain.lower.uniq.sort"],
  ['rcpts-mime-names', A, "rcpts('mime'):name"],
  ['rcpts-smtp-none', A, "rcpts('smtp')", {}],
  ['rcpts-tables', A, "rcpts('mime')"],
  ['user', A, 'user'],
  ['user-none', A, 'user', {}],
  ['to', A, 'to'],
  ['to-no-deliver', A, 'to', { Rcpt: 'bob@example.net' }],
  ['digest', A, 'digest'],
  ['attachments', A, 'attachments'],
  ['attachments-b32-sha256', A, "attachments('base32', 'sha256')"],
  ['attachments-b64-md5', A, "attachments('base64','md5')"],
  ['attachments-rbase32-sha1', A, "attachments('rbase32','sha1')"],
  ['attachments-bleach32', A, "attachments('bleach32')"],
  ['attachments-none', H, 'attachments'],
  ['files', A, 'files'],
  ['files-none', H, 'files'],
  ['languages', A, 'languages'],
  ['helo', A, 'helo'],
  ['helo-none', A, 'helo', {}],
  ['header', A, "header('Subject')"],
  ['header-lowercase-name', A, "header('subject')"],
  ['header-strong-miss', A, "header('subject', 'strong')"],
  ['header-strong-hit', A, "header('Subject', 'strong')"],
  ['header-first-of-many', A, "header('X-Custom')"],
  ['header-full-values', A, "header('X-Custom', 'full'):value"],
  ['header-full-decoded', A, "header('Subject', 'full'):decoded"],
  ['header-full-raw', A, "header('To', 'full'):raw"],
  ['header-full-name', A, "header('x-custom', 'full'):name"],
  ['header-missing', A, "header('X-Missing')"],
  ['received-from-hostname', A, "received('from_hostname')"],
  ['received-by-hostname', A, "received('by_hostname')"],
  ['received-real-ip', A, "received('real_ip')"],
  ['received-from-ip', A, "received('from_ip')"],
  ['received-proto', A, "received('proto')"],
  ['received-timestamp', A, "received('timestamp')"],
  ['received-method', A, 'received:by_hostname'],
  ['received-none', H, 'received'],
  ['urls', A, 'urls'],
  ['urls-get-host', A, "urls('get_host')"],
  ['urls-get-tld', A, "urls('get_tld').uniq.sort"],
  ['urls-method-host', H, 'urls:get_host'],
  ['urls-method-tld-join', A, "urls:get_tld.uniq.sort.join(',')"],
  ['urls-html', H, 'urls'],
  ['specific-urls', H, 'specific_urls({limit = 5, esld_limit = 1}):get_host.sort'],
  ['specific-urls-limit', A, 'specific_urls({limit = 2}):get_host.sort'],
  ['urls-filtered', H, "urls_filtered({'image'})"],
  ['emails', A, 'emails'],
  ['emails-user', A, "emails('get_user')"],
  ['emails-host', A, 'emails:get_host'],
  ['emails-none', H, 'emails'],
  ['pool-var-none', A, "pool_var('nonexistent')"],
  ['task-cache-none', A, "task_cache('nonexistent')"],
  ['request-header', A, "request_header('X-Test-Header')"],
  ['request-header-none', A, "request_header('X-Absent')"],
  ['time-message', A, "time('message')"],
  ['time-message-format', A, "time('message', '!%Y-%m-%d %H:%M')"],
  ['time-message-tz', H, "time('message')"],
  ['words-raw', A, "words('raw')"],
  ['words-norm', A, "words('norm')"],
  ['words-stem', A, 'words'],
  ['queueid', A, 'queueid'],
  ['queueid-none', A, 'queueid', {}],
  ['messageid', A, 'messageid'],
  ['symbol-none', A, "symbol('SOME_SYMBOL')"],
  // transforms
  ['lower', A, "header('Subject').lower"],
  ['lower-utf8', A, "header('Subject').lower_utf8"],
  ['first', A, "list('b','a','c').first"],
  ['last', A, "list('b','a','c').last"],
  ['nth', A, "list('b','a','c').nth(2)"],
  ['take-n', A, "list('b','a','c').take_n(2)"],
  ['drop-n', A, "list('b','a','c').drop_n(1)"],
  ['join', A, "list('b','a','c').join(', ')"],
  ['join-default', A, "list('b','a','c').join"],
  ['sort', A, "list('b','a','c','a').sort"],
  ['uniq-sort', A, "list('b','a','c','a').uniq.sort"],
  ['digest-hex', A, "header('Subject').digest"],
  ['digest-b32-sha256', A, "header('Subject').digest('base32','sha256')"],
  ['digest-b64-sha512', A, "header('Subject').digest('base64','sha512')"],
  ['digest-md5', A, "header('Subject').digest('hex','md5')"],
  ['digest-bleach32-sha1', A, "header('Subject').digest('bleach32','sha1')"],
  ['digest-list', A, "list('a','b').digest('hex','md5')"],
  ['substring', A, "header('Subject').substring(2, 5)"],
  ['substring-negative', A, "header('Subject').substring(-5)"],
  ['substring-start', A, "header('Message-ID').substring(3)"],
  ['prepend', A, "header('X-Mailer').prepend('x', 'y')"],
  ['append', A, "header('X-Mailer').append('-z')"],
  ['regexp-captures', A, "header('X-Mailer').regexp('(\\w+)Test (\\d)')"],
  ['regexp-all', A, "header('X-Custom', 'full'):value.regexp('s')"],
  ['match-miss', A, "header('X-Mailer').match('^nomatch')"],
  ['id-transform', A, "header('Subject').id('a','b')"],
  ['id-transform-one', A, "header('Subject').id('a')"],
  ['id-transform-none', A, "header('Subject').id"],
  ['equal-hit', A, "id('x').equal('x')"],
  ['equal-miss', A, "id('x').equal('y')"],
  ['in-hit', A, "id('b').in('a','b')"],
  ['in-miss', A, "id('z').in('a','b')"],
  ['not-in', A, "id('z').not_in('a','b')"],
  ['not-in-miss', A, "id('a').not_in('a','b')"],
  ['inverse-nonempty', A, "id('x').inverse"],
  ['inverse-empty', A, 'id.inverse'],
  ['to-ascii', A, "header('Subject').to_ascii"],
  ['to-ascii-arg', A, "header('Subject').to_ascii('_')"],
  ['get-tld', A, "id('www.shop.example.co.uk').get_tld"],
  ['get-tld-list', A, "list('a.example.com', 'b.test.org').get_tld"],
  ['pack-numbers', A, "list('1','2.5').pack_numbers.digest('hex','md5')"],
  ['pack-numbers-int', A, "list('1','2').pack_numbers('i').digest('hex','md5')"],
  ['filter-string-nils', A, "list('a','nil','b').filter_string_nils"],
  ['lower-list', A, "rcpts('mime'):addr.lower"],
  ['ipmask-string', A, "id('192.0.2.77').ipmask(16)"],
  ['ipmask-invalid', A, "id('not-an-ip').ipmask(16)"],
  // combinations of several selectors
  ['combine-strings', A, "id('a');id('b')"],
  ['combine-zip', A, "id('pre-');rcpts('mime'):addr"],
  ['combine-star', A, "from('mime'):domain*helo"],
  ['combine-nil', A, "id('a');header('X-Missing')"],
  ['combine-two-lists', A, "list('1','2','3');list('a','b')"],
  ['whitespace', A, " header ( 'Subject' ) . lower ; id( 'x' ) "],
];

export const MESSAGE_CASES: MessageCase[] = ROWS.map(([id, message, selector, headers]) => ({ id, message, selector, headers: headers ?? ENVELOPE }));

export const PARSE_CASES: ParseCase[] = [
  { id: 'unknown-extractor', selector: 'nosuch' },
  { id: 'unknown-transform', selector: 'header(Subject).nosuch' },
  { id: 'unclosed-paren', selector: "header('Subject'" },
  { id: 'unclosed-quote', selector: "header('Subject)" },
  { id: 'trailing-dot', selector: 'header(Subject).' },
  { id: 'bad-arg-schema', selector: "time('nosuchtype')" },
  { id: 'bad-digest-encoding', selector: "digest.digest('base99')" },
  { id: 'empty-second', selector: 'id;' },
  { id: 'valid-simple', selector: 'ip' },
  { id: 'valid-complex', selector: "urls:get_tld.uniq.sort.join(',')" },
  { id: 'valid-named-args', selector: 'specific_urls({limit = 5, esld_limit = 1}):get_host' },
  { id: 'valid-two', selector: "id('prefix');from:domain" },
  { id: 'trailing-garbage', selector: 'ip ip' },
];
