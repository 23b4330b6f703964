// A process that logs through the buffered stdout logger of `serve` and then ends the way named
// by argv[2]; buffered-log.test.ts checks that every line it wrote reached stdout, in order.
import { createLogger } from '../../src/observability/log.js';
import { unbufferStdout } from '../../src/observability/line-buffer.js';

const how = process.argv[2];
const format = process.argv[3] === 'text' ? 'text' : 'json';
const log = createLogger({ format, buffered: true }).child('task');
// About 40 KiB: within a pipe's 64 KiB, so no write waits for the reader. Past that a write is
// queued in node, and node drops what is queued when the process exits, buffered or not.
const LINES = 100;
for (let i = 0; i < LINES; i++) log.info(`line ${i}`, { i, pad: 'x'.repeat(300) });

switch (how) {
  case 'exit':
    process.exit(3);
    break;
  case 'throw':
    setImmediate(() => {
      throw new Error('crash after logging');
    });
    break;
  case 'reject':
    void Promise.reject(new Error('rejection nobody handles'));
    break;
  case 'handled-crash':
    // As a cluster worker: its uncaughtException handler logs the reason and exits.
    process.on('uncaughtException', (err) => {
      log.error(`worker crashed: ${err.message}`);
      process.exit(1);
    });
    setImmediate(() => {
      throw new Error('boom');
    });
    break;
  case 'stopping':
    // A stopping worker writes directly: a line after unbuffering is out before the next statement.
    unbufferStdout();
    log.info('after unbuffer');
    process.kill(process.pid, 'SIGKILL');
    break;
  default:
    // Nothing keeps the loop alive: the process ends by itself with lines still waiting.
    break;
}
