// Where a profile's call frame belongs, shared by the CPU and allocation profile summaries: the
// file (npm:<package>, src/…, bench/…, scripts/…, node internals) and the area it counts under
// (src/<folder>, src/modules/<module>, the package, node internals).

export function fileOf(url) {
  const path = url.replace(/^file:\/\//, '');
  const npm = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(path);
  if (npm) return `npm:${npm[1]}`;
  const own = /\/(src|bench|scripts)\/(.*)$/.exec(path);
  return own ? `${own[1]}/${own[2]}` : path;
}

export function areaOf(file) {
  const m = /^src\/(modules\/[^/]+|[^/]+)/.exec(file);
  return m ? m[1] : file.startsWith('node:') ? 'node internals' : file;
}
