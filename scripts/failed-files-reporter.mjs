// A node:test reporter that writes the files holding a failed test, one a line (run-tests.mjs
// reads them to run those files once more, alone). A failure without a file is written as
// '(unknown file)', which run-tests.mjs takes as a reason not to run anything again.
export default async function* failedFilesReporter(source) {
  const files = new Set();
  for await (const event of source) {
    if (event.type === 'test:fail') files.add(event.data.file ?? '(unknown file)');
  }
  yield files.size ? `${[...files].join('\n')}\n` : '';
}
