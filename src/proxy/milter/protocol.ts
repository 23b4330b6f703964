// The milter v6 wire vocabulary: command and reply
// letters, the OPTNEG action and protocol bits, and the encoding of reply frames. Every frame
// in both directions is `u32 length (BE) = 1 + len(data)`, one command letter, the data.

/** Commands an MTA sends (SMFIC_*), by their letter. */
export const Cmd = {
  ABORT: 0x41, // 'A'
  BODY: 0x42, // 'B'
  CONNECT: 0x43, // 'C'
  MACRO: 0x44, // 'D'
  BODYEOB: 0x45, // 'E'
  HELO: 0x48, // 'H'
  QUIT_NC: 0x4b, // 'K'
  HEADER: 0x4c, // 'L'
  MAIL: 0x4d, // 'M'
  EOH: 0x4e, // 'N'
  OPTNEG: 0x4f, // 'O'
  QUIT: 0x51, // 'Q'
  RCPT: 0x52, // 'R'
  DATA: 0x54, // 'T'
  UNKNOWN: 0x55, // 'U'
} as const;

const VALID_COMMANDS = new Set<number>(Object.values(Cmd));

export function isValidCommand(c: number): boolean {
  return VALID_COMMANDS.has(c);
}

/** OPTNEG action bits (SMFIF_*): what the filter may do to a message. */
export const Act = {
  ADDHDRS: 0x01, // SMFIR_ADDHEADER, SMFIR_INSHEADER
  CHGBODY: 0x02, // SMFIR_REPLBODY
  ADDRCPT: 0x04, // SMFIR_ADDRCPT
  DELRCPT: 0x08, // SMFIR_DELRCPT
  CHGHDRS: 0x10, // SMFIR_CHGHEADER
  QUARANTINE: 0x20, // SMFIR_QUARANTINE
  CHGFROM: 0x40, // SMFIR_CHGFROM
  ADDRCPT_PAR: 0x80,
  SETSYMLIST: 0x100,
} as const;

/**
 * Action bits we ask for, out of what the MTA offers. Rspamd ORs 0x3F into the offer (asking
 * for abilities the MTA did not offer, which Sendmail refuses); we take the intersection and
 * leave out, at reply time, any frame whose ability was not granted. ADDRCPT_PAR and SETSYMLIST
 * are never used but echoed like Rspamd does, so Postfix's offer of 0x1FF gets 0x1FF back.
 */
export const ACTIONS_WANTED = 0x1ff;

/** OPTNEG protocol bits (SMFIP_NR_*): "the filter sends no reply to this command". */
export const Nr = {
  HDR: 0x80,
  CONN: 0x1000,
  HELO: 0x2000,
  MAIL: 0x4000,
  RCPT: 0x8000,
  DATA: 0x10000,
  UNKN: 0x20000,
  EOH: 0x40000,
  BODY: 0x80000,
} as const;

/** Rspamd's fixed protocol mask 0x000FF080: every NR_* bit, no "don't send me X" bit. */
export const NR_ALL = 0x000ff080;

/** The command whose reply a granted NR bit suppresses (the others always or never answer). */
export const NR_BIT_OF_COMMAND: ReadonlyMap<number, number> = new Map([
  [Cmd.CONNECT, Nr.CONN],
  [Cmd.HELO, Nr.HELO],
  [Cmd.MAIL, Nr.MAIL],
  [Cmd.RCPT, Nr.RCPT],
  [Cmd.DATA, Nr.DATA],
  [Cmd.HEADER, Nr.HDR],
  [Cmd.EOH, Nr.EOH],
  [Cmd.BODY, Nr.BODY],
  [Cmd.UNKNOWN, Nr.UNKN],
]);

/** The protocol version we speak; an MTA offering less gets its own version back. */
export const MILTER_VERSION = 6;
/** libmilter's oldest version; anything below is not milter at all. */
export const MILTER_MIN_VERSION = 2;

/**
 * Replies to the MTA (SMFIR_*). Modification frames come first; exactly one final frame
 * (`accept`, `discard`, `tempfail`, `replycode`, or `quarantine` + `accept`) ends a verdict.
 */
export type MilterReply =
  | { kind: 'optneg'; version: number; actions: number; protocol: number }
  | { kind: 'accept' }
  | { kind: 'continue' }
  | { kind: 'discard' }
  | { kind: 'tempfail' }
  | { kind: 'replycode'; text: string }
  | { kind: 'quarantine'; reason: string }
  | { kind: 'addheader'; name: string; value: string }
  | { kind: 'insheader'; index: number; name: string; value: string }
  | { kind: 'chgheader'; index: number; name: string; value: string }
  | { kind: 'chgfrom'; sender: string }
  | { kind: 'addrcpt'; rcpt: string }
  | { kind: 'delrcpt'; rcpt: string }
  | { kind: 'replbody'; chunk: Buffer };

const REPLY_LETTER: Record<MilterReply['kind'], number> = {
  optneg: 0x4f, // 'O'
  accept: 0x61, // 'a'
  continue: 0x63, // 'c'
  discard: 0x64, // 'd'
  tempfail: 0x74, // 't'
  replycode: 0x79, // 'y'
  quarantine: 0x71, // 'q'
  addheader: 0x68, // 'h'
  insheader: 0x69, // 'i'
  chgheader: 0x6d, // 'm'
  chgfrom: 0x65, // 'e'
  addrcpt: 0x2b, // '+'
  delrcpt: 0x2d, // '-'
  replbody: 0x62, // 'b'
};

/** The ability an MTA must have granted before it accepts this reply; 0: always allowed. */
export function requiredAction(r: MilterReply): number {
  switch (r.kind) {
    case 'addheader':
    case 'insheader':
      return Act.ADDHDRS;
    case 'chgheader':
      return Act.CHGHDRS;
    case 'replbody':
      return Act.CHGBODY;
    case 'addrcpt':
      return Act.ADDRCPT;
    case 'delrcpt':
      return Act.DELRCPT;
    case 'chgfrom':
      return Act.CHGFROM;
    case 'quarantine':
      return Act.QUARANTINE;
    default:
      return 0;
  }
}

const NUL = Buffer.from([0]);

function frame(letter: number, parts: readonly Buffer[]): Buffer {
  let len = 1;
  for (const p of parts) len += p.length;
  const out = Buffer.allocUnsafe(4 + len);
  out.writeUInt32BE(len, 0);
  out[4] = letter;
  let off = 5;
  for (const p of parts) off += p.copy(out, off);
  return out;
}

function u32(n: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(n >>> 0, 0);
  return b;
}

/** A C string: Rspamd builds these with g_string_new, so a value ends at its first NUL. */
function cstr(s: string): Buffer[] {
  const nul = s.indexOf('\0');
  return [Buffer.from(nul < 0 ? s : s.slice(0, nul), 'utf8'), NUL];
}

export function encodeReply(r: MilterReply): Buffer {
  const letter = REPLY_LETTER[r.kind];
  switch (r.kind) {
    case 'optneg':
      return frame(letter, [u32(r.version), u32(r.actions), u32(r.protocol)]);
    case 'accept':
    case 'continue':
    case 'discard':
    case 'tempfail':
      return frame(letter, []);
    case 'replycode':
      return frame(letter, cstr(r.text));
    case 'quarantine':
      return frame(letter, cstr(r.reason));
    case 'addheader':
      return frame(letter, [...cstr(r.name), ...cstr(r.value)]);
    case 'insheader':
    case 'chgheader':
      return frame(letter, [u32(r.index), ...cstr(r.name), ...cstr(r.value)]);
    case 'chgfrom':
      return frame(letter, cstr(r.sender));
    case 'addrcpt':
    case 'delrcpt':
      return frame(letter, cstr(r.rcpt));
    case 'replbody':
      return frame(letter, [r.chunk]);
  }
}

/** A final reply ends the MTA's wait for this message. */
export function isFinalReply(r: MilterReply): boolean {
  return r.kind === 'accept' || r.kind === 'discard' || r.kind === 'tempfail' || r.kind === 'replycode';
}
