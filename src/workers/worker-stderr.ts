// A worker's stderr, passed through the supervisor: node:cluster workers would otherwise write
// to the terminal directly, and the supervisor needs to see V8's report when a worker's heap
// reaches its cap (the only word of why it died: V8 aborts the process right after).

import type { Readable } from 'node:stream';

/** Longest stderr line kept whole while forwarding; a longer run without a newline is passed on in pieces. */
const MAX_STDERR_LINE = 64 * 1024;

/**
 * Passes a worker's stderr on to ours line by line (two workers' lines never interleave) and
 * tells `onLine` about each; resolves when the stream ends.
 */
export function forwardStderr(stream: Readable, onLine: (line: string) => void): Promise<void> {
  let partial = '';
  const emit = (text: string): void => {
    onLine(text);
    process.stderr.write(text);
  };
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    partial += chunk;
    let start = 0;
    for (let nl = partial.indexOf('\n'); nl >= 0; nl = partial.indexOf('\n', start)) {
      emit(partial.slice(start, nl + 1));
      start = nl + 1;
    }
    partial = partial.slice(start);
    if (partial.length > MAX_STDERR_LINE) {
      emit(partial);
      partial = '';
    }
  });
  return new Promise((resolve) => {
    const done = (): void => {
      if (partial) emit(`${partial}\n`);
      partial = '';
      resolve();
    };
    stream.once('end', done);
    stream.once('error', done);
  });
}
