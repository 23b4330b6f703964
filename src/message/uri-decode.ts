// Percent-decoding of text taken from a message (URL parts, mailto: addresses). The input is the
// sender's: `%E0%A4%A` (a cut UTF-8 sequence) or `%ff` make decodeURIComponent throw URIError,
// and one such URL must not end a module's check. Like Rspamd's url decoding, every well-formed
// `%XX` becomes its byte; the bytes are read as UTF-8, an invalid sequence as U+FFFD, and a `%`
// that does not start an escape stays as written.

const ESCAPE_RUN = /(?:%[0-9a-fA-F]{2})+/g;
const utf8 = new TextDecoder('utf-8', { fatal: false });

/** decodeURIComponent that never throws (see above); input without `%` is returned as is. */
export function decodePercentLenient(s: string): string {
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    // Decoded run by run: one bad escape spoils only its own run.
    return s.replace(ESCAPE_RUN, (run) => {
      const bytes = new Uint8Array(run.length / 3);
      for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(run.slice(i * 3 + 1, i * 3 + 3), 16);
      return utf8.decode(bytes);
    });
  }
}
