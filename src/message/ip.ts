// A cheap test before ipaddr.js: its isValid() throws and catches internally for anything that
// is not an address, and host names (the common input in Received headers and URLs) made that
// exception path a leading cost of a scan.

/** Characters an IPv4/IPv6 literal can consist of (an optional zone suffix `%eth0` included). */
const IP_CHARS = /^[0-9a-f:.]+(?:%[\w.-]+)?$/i;

/** true when `text` could be an IP literal; false means it certainly is not one. */
export function mayBeIp(text: string): boolean {
  return text.length >= 2 && text.length <= 64 && IP_CHARS.test(text);
}
