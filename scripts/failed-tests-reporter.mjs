// A node:test reporter that writes one JSON line per failed test: its file, name and the first
// line of its error. run-tests.mjs reads them to run those files once more, alone, and to end the
// run's output with the failures (a CI log read from its end shows them without the whole log).
export default async function* failedTestsReporter(source) {
  for await (const event of source) {
    if (event.type !== 'test:fail') continue;
    const { file, name, details } = event.data;
    const cause = details?.error?.cause ?? details?.error;
    const message = String(cause?.message ?? cause ?? '').split('\n').find((l) => l.trim()) ?? '';
    yield `${JSON.stringify({ file: file ?? null, name, error: message.slice(0, 300) })}\n`;
  }
}
