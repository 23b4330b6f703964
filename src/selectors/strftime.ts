// A small strftime for the `time` extractor's format argument, always in GMT (Rspamd's selector
// documentation asks for `!`-prefixed, i.e. GMT, formats; the `!` is accepted and dropped).
// Unknown conversions are kept as written.

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

export function strftime(format: string, epochSeconds: number): string {
  const d = new Date(epochSeconds * 1000);
  const fmt = format.startsWith('!') ? format.slice(1) : format;
  const dayOfYear = Math.floor((d.getTime() - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86_400_000) + 1;
  let out = '';
  for (let i = 0; i < fmt.length; i++) {
    const c = fmt[i]!;
    if (c !== '%' || i + 1 >= fmt.length) {
      out += c;
      continue;
    }
    const k = fmt[++i]!;
    switch (k) {
      case 'Y': out += String(d.getUTCFullYear()); break;
      case 'y': out += pad(d.getUTCFullYear() % 100); break;
      case 'm': out += pad(d.getUTCMonth() + 1); break;
      case 'd': out += pad(d.getUTCDate()); break;
      case 'e': out += String(d.getUTCDate()).padStart(2, ' '); break;
      case 'H': out += pad(d.getUTCHours()); break;
      case 'I': out += pad(((d.getUTCHours() + 11) % 12) + 1); break;
      case 'p': out += d.getUTCHours() < 12 ? 'AM' : 'PM'; break;
      case 'M': out += pad(d.getUTCMinutes()); break;
      case 'S': out += pad(d.getUTCSeconds()); break;
      case 'j': out += pad(dayOfYear, 3); break;
      case 'a': out += DAYS[d.getUTCDay()]!.slice(0, 3); break;
      case 'A': out += DAYS[d.getUTCDay()]!; break;
      case 'b': case 'h': out += MONTHS[d.getUTCMonth()]!.slice(0, 3); break;
      case 'B': out += MONTHS[d.getUTCMonth()]!; break;
      case 'w': out += String(d.getUTCDay()); break;
      case 'Z': out += 'GMT'; break;
      case 'z': out += '+0000'; break;
      case 's': out += String(epochSeconds); break;
      case 'F': out += `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`; break;
      case 'T': out += `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`; break;
      case '%': out += '%'; break;
      default: out += '%' + k;
    }
  }
  return out;
}
