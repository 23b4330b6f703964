// Signatures of bugs already filed (issue 17) that other work is fixing. A finding that
// matches one is labelled with it, so a campaign's report separates the known from the new;
// `--skip-known` does not send inputs that would hit a known hang at all (each costs a
// hung worker, ten seconds and a restart, and tells nothing new).

/** Whitespace that is not SP/HT/CR/LF, as bytes (UTF-8 forms, and the bare latin1 bytes). */
const ODD_SPACE = [
  '\xc2\xa0', '\x0b', '\x0c', '\xe2\x80\xa8', '\xe2\x80\xa9', '\xe3\x80\x80', '\xef\xbb\xbf', '\xe1\x9a\x80', '\xc2\x85', '\xe2\x80\xaf', '\xe2\x81\x9f',
  '\xe2\x80\x80', '\xe2\x80\x81', '\xe2\x80\x82', '\xe2\x80\x83', '\xe2\x80\x84', '\xe2\x80\x85', '\xe2\x80\x86', '\xe2\x80\x87', '\xe2\x80\x88', '\xe2\x80\x89', '\xe2\x80\x8a', '\xa0', '\x85',
];

/** Signature floods at or above this count are the known DKIM/ARC slowness (issue 17 item 3). */
const SIGNATURE_FLOOD = 200;

/** The values (with continuation lines) of every header line named `name` anywhere in the input. */
function headerValues(text: string, name: RegExp): string[] {
  const out: string[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    if (!name.test(lines[i]!)) continue;
    let v = lines[i]!;
    while (i + 1 < lines.length && /^[ \t]/.test(lines[i + 1]!)) v += lines[++i];
    out.push(v);
  }
  return out;
}

export type KnownBug = 'received-odd-whitespace' | 'signature-flood';

/** The known bug an input would hit, judged from its bytes. */
export function knownBug(bytes: Buffer): KnownBug | undefined {
  const text = bytes.toString('latin1');
  if (/received:/i.test(text)) {
    for (const v of headerValues(text, /^received:/i)) if (ODD_SPACE.some((s) => v.includes(s))) return 'received-odd-whitespace';
  }
  const sigs = (text.match(/^(dkim-signature|arc-seal|arc-message-signature|arc-authentication-results):/gim) ?? []).length;
  if (sigs >= SIGNATURE_FLOOD) return 'signature-flood';
  return undefined;
}
