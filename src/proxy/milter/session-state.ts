// What one milter connection remembers: connection
// facts (CONNECT, HELO, macros) that live until QUIT_NC or the end of the connection, and the
// message being assembled (envelope, header bookkeeping, bytes) that lives until its verdict
// or ABORT.

import type { Connect, ConnectAddress, HeaderField } from './commands.js';
import { MilterInputError } from './commands.js';

/** ASCII-only lower case: header and macro names compare like Rspamd's rspamd_strcase_equal. */
export function asciiLower(s: string): string {
  return /[A-Z]/.test(s) ? s.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32)) : s;
}

/** Stages whose macros describe the SMTP connection, not one message: `C` CONNECT, `H` HELO. */
const CONNECTION_STAGES = new Set([0x43, 0x48]);

interface MacroEntry {
  value: string;
  stage: number;
}

export interface MessageCaps {
  maxMacros: number;
  maxHeaders: number;
  maxRecipients: number;
  maxMessage: number;
}

/** The message as handed to the scan: envelope, bytes and header bookkeeping. */
export interface FinishedMessage {
  from?: string;
  rcpts: string[];
  body: Buffer;
  /** Number of header fields received (Rspamd's `cur_hdr` before any change). */
  headerCount: number;
  /** Occurrences per lower-cased header name. */
  headerOccurrences: Map<string, number>;
  /** More than max_message bytes arrived: the bytes past the cap were dropped. */
  oversize: boolean;
  /** Bytes the MTA sent for the message, kept or not. */
  size: number;
}

export class SessionState {
  readonly caps: MessageCaps;
  // Connection: until QUIT_NC.
  hostname: string | undefined;
  address: ConnectAddress | undefined;
  /** Not cleared by QUIT_NC (Rspamd neither; the MTA re-sends it). */
  helo: string | undefined;
  #macros = new Map<string, MacroEntry>();
  // Message: until its verdict or ABORT.
  from: string | undefined;
  rcpts: string[] = [];
  #chunks: Buffer[] = [];
  #kept = 0;
  #size = 0;
  #oversize = false;
  #headerCount = 0;
  #occurrences = new Map<string, number>();

  constructor(caps: MessageCaps) {
    this.caps = caps;
  }

  setMacros(stage: number, pairs: ReadonlyArray<[string, string]>): void {
    for (const [name, value] of pairs) {
      const key = asciiLower(name);
      if (!this.#macros.has(key) && this.#macros.size >= this.caps.maxMacros) {
        throw new MilterInputError(`more than ${this.caps.maxMacros} distinct macros`);
      }
      // A redefinition moves to the end: lookups then see the latest value and stage.
      this.#macros.delete(key);
      this.#macros.set(key, { value, stage });
    }
  }

  macro(name: string): string | undefined {
    return this.#macros.get(asciiLower(name))?.value;
  }

  connect(c: Connect): void {
    this.hostname = c.hostname;
    this.address = c.address;
  }

  rcpt(r: string): void {
    if (this.rcpts.length >= this.caps.maxRecipients) throw new MilterInputError(`more than ${this.caps.maxRecipients} recipients`);
    this.rcpts.push(r);
  }

  header(h: HeaderField): void {
    if (this.#headerCount >= this.caps.maxHeaders) throw new MilterInputError(`more than ${this.caps.maxHeaders} header fields`);
    const key = asciiLower(h.name.toString('utf8'));
    this.#occurrences.set(key, (this.#occurrences.get(key) ?? 0) + 1);
    this.#headerCount++;
    // `Name: value\r\n` exactly as received (folded values keep their CRLF + WSP).
    this.#append(Buffer.concat([h.name, COLON_SP, h.value, CRLF]));
  }

  endOfHeaders(): void {
    this.#append(CRLF);
  }

  body(chunk: Buffer): void {
    this.#append(chunk);
  }

  #append(b: Buffer): void {
    this.#size += b.length;
    if (this.#oversize) return;
    if (this.#kept + b.length > this.caps.maxMessage) {
      // Stop holding the message; its verdict will be given without a scan (session.ts).
      this.#oversize = true;
      this.#chunks = [];
      this.#kept = 0;
      return;
    }
    this.#chunks.push(b);
    this.#kept += b.length;
  }

  /** The message as it stands; the caller builds its request, then calls resetMessage(). */
  finishMessage(): FinishedMessage {
    const m: FinishedMessage = {
      rcpts: this.rcpts,
      body: Buffer.concat(this.#chunks, this.#kept),
      headerCount: this.#headerCount,
      headerOccurrences: this.#occurrences,
      oversize: this.#oversize,
      size: this.#size,
    };
    if (this.from !== undefined) m.from = this.from;
    return m;
  }

  /**
   * ABORT and the end of each message. Besides the message itself, the macros the MTA sent
   * for it (stages MAIL and later) go too, as in libmilter (mi_clr_macros). Rspamd keeps every
   * macro until QUIT_NC: a message's queue id or AUTH user would then leak into
   * the next message of the connection if the MTA did not re-send it. Postfix and Sendmail send
   * the MAIL-stage macros with every transaction, so nothing the next message needs is lost.
   */
  resetMessage(): void {
    this.from = undefined;
    this.rcpts = [];
    this.#chunks = [];
    this.#kept = 0;
    this.#size = 0;
    this.#oversize = false;
    this.#headerCount = 0;
    this.#occurrences = new Map();
    for (const [k, e] of this.#macros) if (!CONNECTION_STAGES.has(e.stage)) this.#macros.delete(k);
  }

  /** QUIT_NC: the MTA starts over with a new SMTP connection on this milter connection. */
  resetConnection(): void {
    this.resetMessage();
    this.#macros.clear();
    this.hostname = undefined;
    this.address = undefined;
  }
}

const COLON_SP = Buffer.from(': ');
const CRLF = Buffer.from('\r\n');
