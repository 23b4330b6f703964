// `mailsift keypair`: a new X25519 keypair for HTTP encryption, in the fields of
// `rspamadm keypair`. YAML by default, ready to paste into a worker
// section of mailsift.yaml; `--json` prints Rspamd's JSON shape. Clients get only `pubkey`.

import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { KeypairText } from '../crypto/keypair.js';

/** YAML for a worker section: `keypair:` at the indentation the section's keys use. */
export function keypairYaml(text: KeypairText): string {
  return [
    '# HTTP encryption keypair: paste under workers.normal and/or workers.controller in',
    '# mailsift.yaml; clients use the pubkey (rspamc --key / mailsiftc --key). Keep privkey secret.',
    'keypair:',
    `  privkey: "${text.privkey}"`,
    `  id: "${text.id}"`,
    `  pubkey: "${text.pubkey}"`,
    `  type: ${text.type}`,
    `  algorithm: ${text.algorithm}`,
    `  encoding: ${text.encoding}`,
    '',
  ].join('\n');
}

/** Rspamd's `-j` layout: the fields wrapped in `keypair`, indented by four spaces. */
export function keypairJson(text: KeypairText): string {
  return `${JSON.stringify({ keypair: text }, null, 4)}\n`;
}

export function registerKeypairCommand(program: Command): void {
  program
    .command('keypair')
    .description('print a new keypair for HTTP encryption (YAML for a worker section, or JSON)')
    .option('-j, --json', 'print JSON (the layout of rspamadm keypair -j)')
    .option('--hex', 'encode the keys in hex instead of base32')
    .option('-o, --output <file>', 'write to this file (created readable by the owner only) instead of stdout')
    .action(async (opts: { json?: boolean; hex?: boolean; output?: string }) => {
      // Imported when the command runs: `serve`'s supervisor is this same program and never makes keys.
      const { formatKeypair, generateKeypair } = await import('../crypto/keypair.js');
      const text = formatKeypair(generateKeypair(), opts.hex ? 'hex' : 'base32');
      const out = opts.json ? keypairJson(text) : keypairYaml(text);
      if (opts.output) {
        try {
          // The file holds the private key: never world- or group-readable, never a silent overwrite.
          writeFileSync(opts.output, out, { mode: 0o600, flag: 'wx' });
        } catch (err) {
          const code = (err as { code?: string }).code;
          process.stderr.write(`cannot write ${opts.output}: ${code === 'EEXIST' ? 'the file exists (not overwritten)' : (err as Error).message}\n`);
          process.exitCode = 1;
        }
      } else {
        process.stdout.write(out);
      }
    });
}
