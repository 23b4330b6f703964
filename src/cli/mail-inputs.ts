// Message sources for the learning commands: plain files, directories (recursively, so Maildir
// folders' cur/ and new/ are read and tmp/ skipped), and mbox files, which hold many messages
// separated by `From ` lines.
import { open, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

export interface MailInput {
  /** File name, with `#n` appended for the n-th message of an mbox. */
  name: string;
  read(): Promise<Buffer>;
}

/** A file is read as an mbox when it starts with a `From ` separator line. */
async function isMbox(path: string): Promise<boolean> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(5);
    const { bytesRead } = await fh.read(buf, 0, 5, 0);
    return bytesRead === 5 && buf.toString('latin1') === 'From ';
  } finally {
    await fh.close();
  }
}

/** Split an mbox (mboxrd quoting undone: `>From ` → `From `) into messages without their separator lines. */
export function splitMbox(data: Buffer): Buffer[] {
  const text = data.toString('latin1');
  // Each separator: where its line starts and where the message after it begins.
  const seps: Array<{ line: number; body: number }> = [];
  const re = /(^|\n)From [^\n]*\n/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) seps.push({ line: m.index + m[1]!.length, body: m.index + m[0].length });
  const out: Buffer[] = [];
  for (let i = 0; i < seps.length; i++) {
    const end = i + 1 < seps.length ? seps[i + 1]!.line : text.length;
    const body = text.slice(seps[i]!.body, end).replace(/^>(>*From )/gm, '$1');
    if (body.trim().length > 0) out.push(Buffer.from(body, 'latin1'));
  }
  return out;
}

async function addFile(path: string, out: MailInput[]): Promise<void> {
  if (await isMbox(path)) {
    const messages = splitMbox(await readFile(path));
    messages.forEach((m, i) => out.push({ name: `${path}#${i + 1}`, read: async () => m }));
    return;
  }
  out.push({ name: path, read: () => readFile(path) });
}

async function walk(dir: string, out: MailInput[]): Promise<void> {
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const maildir = ['cur', 'new', 'tmp'].every((n) => entries.some((e) => e.isDirectory() && e.name === n));
  for (const e of entries) {
    if (e.name.startsWith('.')) continue;
    // Maildir tmp/ holds deliveries still being written.
    if (maildir && e.name === 'tmp') continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) await walk(p, out);
    else if (e.isFile()) await addFile(p, out);
  }
}

/** Every message under the given paths, in a stable order. */
export async function expandMailInputs(paths: readonly string[]): Promise<MailInput[]> {
  const out: MailInput[] = [];
  for (const p of paths) {
    const st = await stat(p).catch((e: NodeJS.ErrnoException) => {
      throw new Error(`cannot open ${p}: ${e.code ?? e.message}`);
    });
    if (st.isDirectory()) await walk(p, out);
    else await addFile(p, out);
  }
  return out;
}
