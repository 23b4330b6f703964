// Importing a user's plugin file. JavaScript (.js, .mjs) is imported where it lies. TypeScript
// (.ts) needs no build step by the user: it is compiled here with esbuild's transform (types
// are stripped, not checked) and imported from a data: URL, so nothing is written next to the
// configuration. Such a module can import node's built-in modules (`node:fs`) but not files
// beside it nor npm packages; mailsift's own API reaches it as the argument of its `plugin`
// function (docs/plugins.md).

import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';

/** A plugin file larger than this is refused before it is compiled (a plugin is code, not data). */
export const MAX_PLUGIN_FILE_BYTES = 4 * 1024 * 1024;

/** A plugin file that cannot be compiled: the message names the file, line and column. */
export class PluginCompileError extends Error {
  readonly code = 'PLUGIN_COMPILE';
  constructor(message: string) {
    super(message);
    this.name = 'PluginCompileError';
  }
}

interface EsbuildMessage {
  text: string;
  location?: { line: number; column: number; lineText?: string } | null;
}

function describe(file: string, errors: readonly EsbuildMessage[]): string {
  return errors
    .slice(0, 3)
    .map((e) => (e.location ? `${file}:${e.location.line}:${e.location.column + 1}: ${e.text}` : `${file}: ${e.text}`))
    .join('; ');
}

/** The module's namespace; throws PluginCompileError or the error its top level threw. */
export async function importPluginFile(file: string): Promise<Record<string, unknown>> {
  if (!file.endsWith('.ts')) return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  const source = await readFile(file);
  if (source.length > MAX_PLUGIN_FILE_BYTES) throw new PluginCompileError(`${file}: ${source.length} bytes, more than the ${MAX_PLUGIN_FILE_BYTES} a plugin file may have`);
  let code: string;
  try {
    // Imported here: most servers have no TypeScript plugin, and esbuild's API module holds about
    // 1 MiB of heap in every process that imports it (docs/tuning.md, "Memory of each process").
    const { transform } = await import('esbuild');
    ({ code } = await transform(source.toString('utf8'), { loader: 'ts', format: 'esm', target: 'node20', sourcefile: file, sourcemap: 'inline' }));
  } catch (err) {
    const errors = (err as { errors?: EsbuildMessage[] }).errors;
    throw new PluginCompileError(errors?.length ? describe(file, errors) : `${file}: ${(err as Error).message}`);
  }
  return (await import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`)) as Record<string, unknown>;
}
