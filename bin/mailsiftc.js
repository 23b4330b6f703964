#!/usr/bin/env node
// Runs the built client (npm run build first). Kept as a shim so `npm install -g` has a stable path.
import { main } from '../dist/src/cli/mailsiftc.js';

process.exitCode = await main(process.argv.slice(2));
