#!/usr/bin/env -S node --max-semi-space-size=1
// The flag is the supervisor's (SUPERVISOR_NODE_FLAGS in src/workers/v8-tuning.ts): each worker sets its own.
// Runs the compiled CLI: `npm run build` puts src/cli/mailsift.ts at dist/src/cli/mailsift.js.
const entry = new URL('../dist/src/cli/mailsift.js', import.meta.url);
try {
  await import(entry.href);
} catch (err) {
  if (err?.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes(entry.pathname)) {
    process.stderr.write('mailsift is not built yet: run `npm run build` first\n');
    process.exit(1);
  }
  throw err;
}
