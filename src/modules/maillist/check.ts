// Mailing-list software detectors of Rspamd's maillist plugin: each looks for the header set one
// list manager writes; a list that only follows RFC 2919/2369 with a bulk/list Precedence counts
// half ("generic").
import type { Task } from '../../plugin-api/index.js';

type Get = (name: string) => string | undefined;

const MAILTO_START = /^<mailto:/;
const EZMLM_SUB = /<mailto:[a-zA-Z.-]+-subscribe@/;
const EZMLM_UNSUB = /<mailto:[a-zA-Z.-]+-unsubscribe@/;
const LINE_END = /[\n\r\u2028\u2029]/;

/**
 * `/<first>.*<then>/` (`.` stopping at line ends) written out: some line holds `first` and, after
 * it, `then`. The regexps retried `.*` from every `<` or `<mailto:` to the end of the value,
 * quadratic on a header of thousands of them.
 */
function inOrder(first: string, then: string, gap = 0): (value: string) => boolean {
  return (value) => value.split(LINE_END).some((line) => {
    const at = line.indexOf(first);
    return at >= 0 && line.indexOf(then, at + first.length + gap) >= 0;
  });
}

const MAILMAN_SUB = { test: inOrder('<mailto:', '=subscribe>') };
const MAILMAN_UNSUB = { test: inOrder('<mailto:', '=unsubscribe>') };
/** /<.+>/: a `<`, at least one character, then a `>`. */
const ANGLE = { test: inOrder('<', '>', 1) };

function isBulkOrList(p: string | undefined): boolean {
  return p === 'bulk' || p === 'list';
}

function ezmlm(get: Get): boolean {
  return /ezmlm$/.test(get('mailing-list') ?? '')
    && get('precedence') === 'bulk'
    && MAILTO_START.test(get('list-post') ?? '')
    && MAILTO_START.test(get('list-help') ?? '')
    && EZMLM_SUB.test(get('list-subscribe') ?? '')
    && EZMLM_UNSUB.test(get('list-unsubscribe') ?? '');
}

function mailman(get: Get): boolean {
  if (!/^\d/.test(get('x-mailman-version') ?? '')) return false;
  if (!isBulkOrList(get('precedence'))) return false;
  // Membership reminders carry a different header set from list traffic.
  if (/yes/.test(get('x-list-administrivia') ?? '') || /mailing list memberships reminder$/.test(get('subject') ?? '')) {
    return get('errors-to') !== undefined && get('x-beenthere') !== undefined && /yes/.test(get('x-no-archive') ?? '');
  }
  return get('list-id') !== undefined
    && MAILTO_START.test(get('list-post') ?? '')
    && MAILTO_START.test(get('list-help') ?? '')
    && MAILMAN_SUB.test(get('list-subscribe') ?? '')
    && MAILMAN_UNSUB.test(get('list-unsubscribe') ?? '');
}

function subscribeRu(get: Get): boolean {
  return /^<.*\.subscribe\.ru>$/.test(get('list-id') ?? '')
    && get('precedence') === 'normal'
    && /^<http:\/\/subscribe\.ru\/archive\/.*>$/.test(get('list-archive') ?? '')
    && /^<mailto:.*-owner@subscribe\.ru>$/.test(get('list-owner') ?? '')
    && /^<http:\/\/subscribe\.ru\/catalog\/.*>$/.test(get('list-help') ?? '')
    && /^<mailto:.*-sub@subscribe\.ru>$/.test(get('list-subscribe') ?? '')
    && /^<mailto:.*-unsub@subscribe\.ru>$/.test(get('list-unsubscribe') ?? '');
}

/** RFC 2369 (List-Unsubscribe and List-Post) plus RFC 2919 (List-Id), each with a bracketed value. */
function rfc2919(get: Get): boolean {
  return ANGLE.test(get('list-id') ?? '') && ANGLE.test(get('list-unsubscribe') ?? '') && ANGLE.test(get('list-post') ?? '');
}

function googleGroups(get: Get): boolean {
  return (get('x-google-loop') !== undefined || get('x-google-group-id') !== undefined) && rfc2919(get);
}

function majordomo(get: Get): boolean {
  const sender = get('sender') ?? '';
  return (/^owner-/.test(sender) || /-owner$/.test(sender)) && isBulkOrList(get('precedence'));
}

function communigate(get: Get): boolean {
  return get('x-listserver') === 'CommuniGate Pro LIST' && rfc2919(get);
}

const DETECTORS: Array<[string, (get: Get) => boolean]> = [
  ['ezmlm', ezmlm],
  ['mailman', mailman],
  ['subscribe.ru', subscribeRu],
  ['googlegroups', googleGroups],
  ['majordomo', majordomo],
  ['cgp', communigate],
];
/** Weight of a list recognised only by its standard headers. */
const GENERIC_WEIGHT = 0.5;

export function checkMaillist(task: Task): void {
  const h = task.message.headers;
  // Rspamd compares the decoded value with surrounding blanks removed.
  const get: Get = (name) => h.first(name)?.value.trim();
  for (const [kind, detect] of DETECTORS) {
    if (detect(get)) {
      task.insert('MAILLIST', 1, kind);
      return;
    }
  }
  if (isBulkOrList(get('precedence')) && rfc2919(get)) task.insert('MAILLIST', GENERIC_WEIGHT, 'generic');
}
