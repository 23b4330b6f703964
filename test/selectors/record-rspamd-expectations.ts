// Records what Rspamd 3.4 (the Debian binary) answers for each selector case in cases.ts, into
// rspamd-3.4-expectations.json beside this file. Run by hand when the cases change:
//
//   node --import tsx test/selectors/record-rspamd-expectations.ts
//
// It starts a private rspamd (test/helpers/real-rspamd.ts: own directories, a free loopback port,
// stopped by its PID) with only a controller worker and Rspamd's controller plugins loaded, then
// for every case POSTs the message to /plugins/selectors/check_message?selector=… with the case's
// request headers, and asks /plugins/selectors/check_selector?selector=… for every parse case.
// The test (selectors-rspamd.test.ts) compares mailsift's answers with the recorded ones.

import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { freePort, startRspamd } from '../helpers/real-rspamd.js';
import { MESSAGE_CASES, PARSE_CASES, messagePath, type RecordedFile } from './cases.js';

const OUT = join(import.meta.dirname, 'rspamd-3.4-expectations.json');

async function request(port: number, method: string, path: string, headers: Record<string, string>, body?: Buffer): Promise<{ status: number; body: string }> {
  const r = await fetch(`http://127.0.0.1:${port}${path}`, { method, headers, ...(body ? { body } : {}) });
  return { status: r.status, body: await r.text() };
}

async function main(): Promise<void> {
  const port = await freePort();
  const rspamd = await startRspamd({
    ports: [port],
    workers: [
      'lua = "/usr/share/rspamd/rules/controller/init.lua";',
      `worker "controller" { bind_socket = "127.0.0.1:${port}"; count = 1; secure_ip = "127.0.0.1"; }`,
    ],
  });
  try {
    const version = execFileSync('/usr/bin/rspamd', ['--version']).toString().trim();
    const file: RecordedFile = {
      recordedWith: version,
      command: `rspamd -f -c <tmp>/rspamd.conf (controller worker only, lua = /usr/share/rspamd/rules/controller/init.lua, secure_ip 127.0.0.1); ` +
        `GET /plugins/selectors/list_extractors and list_transforms; POST /plugins/selectors/check_message?selector=<selector> with the case's headers and message; GET /plugins/selectors/check_selector?selector=<selector>`,
      lists: { extractors: {}, transforms: {} },
      message: {},
      parse: {},
    };
    for (const which of ['extractors', 'transforms'] as const) {
      const r = await request(port, 'GET', `/plugins/selectors/list_${which}`, {});
      for (const [name, v] of Object.entries(JSON.parse(r.body) as Record<string, Record<string, unknown>>)) {
        // args_schema is a dump of Rspamd's schema objects: not something a client reads.
        const { args_schema: _schema, ...rest } = v;
        (file.lists[which] as Record<string, unknown>)[name] = rest;
      }
    }
    for (const c of MESSAGE_CASES) {
      const body = await readFile(messagePath(c.message));
      const q = new URLSearchParams({ selector: c.selector });
      const r = await request(port, 'POST', `/plugins/selectors/check_message?${q}`, c.headers ?? {}, body);
      file.message[c.id] = { status: r.status, body: parseBody(r.body) };
    }
    for (const c of PARSE_CASES) {
      const q = new URLSearchParams({ selector: c.selector });
      const check = await request(port, 'GET', `/plugins/selectors/check_selector?${q}`, {});
      const onMessage = await request(port, 'POST', `/plugins/selectors/check_message?${q}`, {}, Buffer.from('Subject: x\r\n\r\nbody\r\n'));
      file.parse[c.id] = { check: { status: check.status, body: parseBody(check.body) }, message: { status: onMessage.status, body: parseBody(onMessage.body) } };
    }
    await writeFile(OUT, JSON.stringify(file, null, 1) + '\n');
    console.log(`wrote ${OUT}: ${Object.keys(file.message).length} message cases, ${Object.keys(file.parse).length} parse cases`);
  } finally {
    await rspamd.stop();
  }
}

function parseBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

await main();
