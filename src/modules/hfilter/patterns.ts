// Host-name classes of Rspamd's hfilter: names that look dynamic/residential (weight 1–5, 5 the
// most suspicious), HELO forms that no real mail server uses, and bogus HELO addresses.

/** Words that mark dynamic or end-user address space, with their weight. */
const DYNAMIC_WORDS: Array<[string, number]> = [
  ['gprs', 5], ['cdma', 5], ['homeuser', 5], ['dhcp', 5], ['catv', 5], ['wifi', 5], ['dial-?up', 5],
  ['dynamic', 5], ['dyn', 5], ['dynip', 5], ['broadband', 5], ['broad', 5], ['bredband', 5], ['nat', 5],
  ['pptp', 5], ['pppoe', 5], ['ppp', 5], ['modem', 5], ['cablemodem', 5], ['comcast', 5],
  ['[a|x]?dsl-dynamic', 5], ['[a|x]?dsl', 4], ['[a|x]?dsl-line', 4], ['in-?addr', 4], ['pool', 4],
  ['fibertel', 4], ['fbx', 4], ['unused-addr', 3], ['cable', 3], ['kabel', 3], ['host', 2],
  ['customers?', 1], ['user', 1], ['peer', 1],
];

/**
 * Each word matches as a whole label (`.dsl.`), followed by a digit (`dsl-12`) or preceded by
 * one (`12-dsl`); `clients?` has its own weights per form, as in Rspamd.
 */
export const HOST_PATTERNS: Array<[RegExp, number]> = [
  ...DYNAMIC_WORDS.flatMap(([w, weight]): Array<[RegExp, number]> => {
    // The dsl words allow an optional separator before the digit, like the original table.
    const sep = w.includes('dsl') ? '[.-]?' : '[.-]';
    return [
      [new RegExp(`[.-]${w}[.-]`, 'i'), weight],
      [new RegExp(`${w}${sep}[0-9]`, 'i'), weight],
      [new RegExp(`[0-9][.-]?${w}`, 'i'), weight],
    ];
  }),
  [/[.-]clients?[.-]/i, 1],
  [/clients?[.-][0-9]{2,}/i, 5],
  // From the start of a digit run only: from inside one it fails the same way (quadratic).
  [/(?<![0-9])[0-9]{3,}[.-]?clients?/i, 5],
];

/** HELO names no mail server on the Internet uses: no dot, LAN defaults, private suffixes. */
export const HELO_PATTERNS: Array<[RegExp, number]> = [
  [/^[^.]+$/i, 5],
  [/^(dsl)?(device|speedtouch)\.lan$/i, 5],
  [/\.(lan|local|home|localdomain|intra|in-addr.arpa|priv|user|veloxzon)$/i, 5],
];

/** HELO literals in loopback, private, link-local, documentation and reserved ranges. */
export const HELO_BAD_IP: RegExp[] = [
  /^0\./, /^::1$/, /^127\./, /^10\./, /^192\.168\./, /^172\.1[6-9]\./, /^172\.2[0-9]\./, /^172\.3[01]\./,
  /^169\.254\./, /^192\.0\.0\./, /^192\.88\.99\./, /^100.6[4-9]\./, /^100.[7-9]\d\./, /^100.1[01]\d\./,
  /^100.12[0-7]\d\./, /^\d\.\d\.\d\.255$/, /^192\.0\.2\./, /^198\.51\.100\./, /^203\.0\.113\./,
  /^fe[89ab][0-9a-f]::/i, /^fe[cdf][0-9a-f]:/i, /^2001:db8::/i, /^fc00::/i, /^ffxx::/i,
];

/** A HELO that is an address written bare (IPv4 with any separator, or IPv6). */
export const HELO_BARE_IP: RegExp[] = [/^\d+[x.-]\d+[x.-]\d+[x.-]\d+$/i, /^[0-9a-f]+:/i];

/** A fully qualified name: 4–253 characters, labels of letters, digits and inner hyphens, a TLD of 2+. */
const FQDN = /^(?=.{4,253}$)((?!-)[a-zA-Z0-9-]{1,63}(?<!-)\.)+[a-zA-Z0-9-]{2,63}\.?$/;

export function isFqdn(host: string): boolean {
  return FQDN.test(host);
}

/** Highest weight among the patterns that match, 0 when none does. */
export function maxWeight(name: string, patterns: ReadonlyArray<[RegExp, number]>): number {
  let best = 0;
  for (const [re, w] of patterns) if (w > best && re.test(name)) best = w;
  return best;
}
