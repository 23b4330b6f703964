// V8 settings for a scanning process, applied when a normal worker starts.
import v8 from 'node:v8';

/**
 * V8 allocates objects from "pretenured" allocation sites (sites whose objects often survived a
 * young collection) straight into the old generation. The scan path's sites get pretenured, even
 * with one scan at a time, though nearly all its objects die within the scan. Our reading of why
 * that costs so much: the dead old objects stay until a full collection, and until then they keep
 * the young objects they point to alive through every young collection. With pretenuring off,
 * young-collection pauses and promoted bytes roughly halve over the development corpus
 * (docs/tuning.md). Process-wide: under `--single` the controller shares the setting.
 */
export function tuneV8ForScanning(): void {
  v8.setFlagsFromString('--no-allocation-site-pretenuring');
}

/** The young generation's cap (V8's semi-space, MiB) of a role's process: see roleV8Flags. */
export const ROLE_SEMI_SPACE_MIB: Readonly<Record<'normal' | 'controller' | 'fuzzy' | 'proxy', number | undefined>> = {
  normal: undefined,
  controller: 1,
  fuzzy: undefined,
  proxy: undefined,
};

/**
 * `node` flags for a worker of `role`, set when the supervisor forks it. V8 grows a process's
 * young generation up to 16 MiB per semi-space (32 MiB resident) while start-up allocates
 * (configuration, schemas, module set-up) and rarely gives it back: the controller, which
 * serves the web UI and learns at a few requests a second, held 28 MiB more for it than with
 * 1 MiB (PSS 87 → 59 MiB idle, measured with bench/throughput.ts's per-role breakdown). The
 * scanners keep V8's default: their young generation is where a scan's garbage dies, and a
 * smaller one collects more often on the hot path.
 */
export function roleV8Flags(role: keyof typeof ROLE_SEMI_SPACE_MIB): string[] {
  const semi = ROLE_SEMI_SPACE_MIB[role];
  return semi === undefined ? [] : [`--max-semi-space-size=${semi}`];
}
