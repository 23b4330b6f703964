// `mailsift pw`: hashes a controller password for `password` / `enable_password` in
// mailsift.yaml (src/crypto/password.ts), or checks one against a hash with `--check`. The
// password comes from `-p`, else from a no-echo prompt (asked twice) on a terminal, else from
// the first line of stdin, so scripts can pipe it without it showing in `ps`.

import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import type { PasswordHashType } from '../crypto/password.js';

const TYPES: readonly PasswordHashType[] = ['scrypt', 'catena', 'pbkdf2'];
/** Longest password read from stdin or a prompt: a runaway pipe must not fill memory. */
const MAX_PASSWORD_BYTES = 8192;

class PwInputError extends Error {}

function hashType(v: string): PasswordHashType {
  if (!(TYPES as readonly string[]).includes(v)) throw new InvalidArgumentError(`expected one of: ${TYPES.join(', ')}`);
  return v as PasswordHashType;
}

/** Reads one line from a terminal without echoing it; Ctrl-C aborts. */
function promptHidden(prompt: string): Promise<string> {
  const stdin = process.stdin;
  // Echo goes off before the prompt shows, so nothing typed after it is ever displayed.
  stdin.setRawMode(true);
  process.stderr.write(prompt);
  return new Promise((resolve, reject) => {
    let value = '';
    stdin.resume();
    stdin.setEncoding('utf8');
    const finish = (err?: Error): void => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: string): void => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return finish();
        if (ch === '\u0003') return finish(new PwInputError('interrupted'));
        if (ch === '\u0004') return value ? finish() : finish(new PwInputError('no password given'));
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
        if (Buffer.byteLength(value) > MAX_PASSWORD_BYTES) return finish(new PwInputError(`password longer than ${MAX_PASSWORD_BYTES} bytes`));
      }
    };
    stdin.on('data', onData);
  });
}

/** The first line of a piped stdin (without its line ending). */
async function readStdinLine(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    const b = chunk as Buffer;
    chunks.push(b);
    size += b.length;
    const nl = b.indexOf(0x0a);
    if (nl >= 0 || size > MAX_PASSWORD_BYTES) break;
  }
  const text = Buffer.concat(chunks).toString('utf8');
  const line = text.split('\n')[0]!.replace(/\r$/, '');
  if (Buffer.byteLength(line) > MAX_PASSWORD_BYTES) throw new PwInputError(`password longer than ${MAX_PASSWORD_BYTES} bytes`);
  return line;
}

async function readPassword(given: string | undefined, confirm: boolean): Promise<string> {
  let pw: string;
  if (given !== undefined) pw = given;
  else if (process.stdin.isTTY) {
    pw = await promptHidden('Enter password: ');
    if (confirm && pw !== '' && (await promptHidden('Repeat password: ')) !== pw) throw new PwInputError('passwords do not match');
  } else pw = await readStdinLine();
  if (pw === '') throw new PwInputError('no password given');
  return pw;
}

export function registerPwCommand(program: Command): void {
  program
    .command('pw')
    .description('hash a controller password (for password / enable_password), or check one against a hash')
    .option('-p, --password <password>', 'the password (default: prompt on a terminal, else the first line of stdin)')
    .option('-t, --type <type>', `hash format: scrypt (mailsift), catena or pbkdf2 (Rspamd's $2$ / $1$, also accepted by Rspamd)`, hashType, 'scrypt')
    .option('-c, --check <hash>', 'check the password against this hash: exit 0 when it matches, 1 when not')
    .action(async (opts: { password?: string; type: PasswordHashType; check?: string }) => {
      // Imported when the command runs: `serve`'s supervisor is this same program and never hashes.
      const { hashPassword, isHashedPassword, verifyPassword } = await import('../crypto/password.js');
      try {
        if (opts.check !== undefined) {
          if (!isHashedPassword(opts.check)) throw new PwInputError('--check expects a hash ($1$…, $2$… or $scrypt$…)');
          const ok = verifyPassword(opts.check, await readPassword(opts.password, false));
          process.stdout.write(ok ? 'password correct\n' : 'password incorrect\n');
          process.exitCode = ok ? 0 : 1;
          return;
        }
        process.stdout.write(`${hashPassword(await readPassword(opts.password, true), opts.type)}\n`);
      } catch (err) {
        if (!(err instanceof PwInputError)) throw err;
        process.stderr.write(`mailsift pw: ${err.message}\n`);
        process.exitCode = 2;
      }
    });
}
