// Builds mailsift's web UI into dist/webui/ of the package (the controller serves it at `/`
// when no static_dir is configured: src/workers/controller/static.ts BUILTIN_WEBUI_PATH).
// `base: './'`: every asset URL is relative, so the UI works behind a reverse proxy on a
// sub-path; the API client (src/api.ts) uses relative URLs for the same reason.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  // Preact's automatic JSX runtime (tsconfig.json says the same to tsc).
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/webui', import.meta.url)),
    emptyOutDir: true,
    // Served by the controller only: no legacy browsers, no CDN, no inlined source maps.
    target: 'es2022',
    sourcemap: false,
    assetsInlineLimit: 0,
  },
  clearScreen: false,
  logLevel: 'warn',
});
