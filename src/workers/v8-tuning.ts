// V8 settings of each process role: the scan path's pretenuring, each role's heap flags, the supervisor's own.
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

/**
 * V8 settings of each role's process, set by the supervisor when it forks the worker (see
 * roleV8Flags). Measured with `npm run bench -- --via direct --concurrency 8 --repeat 3` on the
 * development split, peak PSS of each process (docs/tuning.md, "Memory of each process"):
 *
 * - `semiSpaceMiB`: the young generation's cap per semi-space. V8 grows it up to 16 MiB (32 MiB
 *   resident) while start-up allocates and rarely gives it back.
 * - `heapGrowingPercent`: how far the old generation may grow over what the last full
 *   collection kept before the next one starts. V8 picks 10 %–300 % by itself, and a scan
 *   worker whose live heap is 37 MiB let its old generation reach 80–100 MiB of mostly dead
 *   scans. 20 % saves about 30 MiB per scan worker for 5–10 % more CPU per message.
 * - `optimizeForSize`: V8's memory-first mode (smaller code, compaction on every full GC). It
 *   nearly doubles a scan's CPU, so only the roles that do not scan at volume get it.
 * - `noSparkplug`: no baseline (Sparkplug) machine code between the interpreter and the
 *   optimising compiler. A scan worker's baseline code and its metadata took about 2.5 MiB of
 *   code and 3 MiB of live heap after a few hundred scans; the hot paths are optimised anyway,
 *   and no CPU cost per scan showed above the machine's noise (docs/tuning.md).
 */
interface RoleV8 {
  semiSpaceMiB?: number;
  heapGrowingPercent?: number;
  optimizeForSize?: boolean;
  noSparkplug?: boolean;
}

export const ROLE_V8: Readonly<Record<'normal' | 'controller' | 'fuzzy' | 'proxy', RoleV8>> = {
  // 8 MiB: another 5 MiB less per worker than 16 for about 3 % more CPU, within the runs' noise (4 MiB cost 25 %).
  // 6 MiB: 2–4 MiB less per worker than 8 after a load; CPU per scan in process, 4 and 16 scans in
  // flight, paired with 8: median 2 % in 6's favour, i.e. no cost above the noise (docs/tuning.md).
  normal: { semiSpaceMiB: 6, heapGrowingPercent: 20, noSparkplug: true },
  // Serves the web UI and learns at a few requests a second: PSS 87 → 56 MiB idle.
  controller: { semiSpaceMiB: 1, optimizeForSize: true, noSparkplug: true },
  // V8's own default, said explicitly: the supervisor's launch flag (SUPERVISOR_NODE_FLAGS) is
  // in process.execArgv, which every worker inherits, and must not cap these roles.
  fuzzy: { semiSpaceMiB: 16 },
  proxy: { semiSpaceMiB: 16 },
};

/**
 * Flags of the supervisor's own `node` command, which only its launchers can give (V8 reads the
 * young generation's cap when the process starts): `bin/mailsift.js`'s first line, `npm start`
 * in package.json and the benchmark's server start (bench/servers.ts). Start-up (configuration,
 * every module's code) grew its young generation to 32 MiB, held until V8's memory reducer ran
 * about 8 s later: the supervisor's start-up peak 104 → 75 MiB. Each role sets its own cap over
 * it (ROLE_V8).
 */
export const SUPERVISOR_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=1'];

/** `node` flags for a worker of `role`, set when the supervisor forks it. */
export function roleV8Flags(role: keyof typeof ROLE_V8): string[] {
  const v = ROLE_V8[role];
  return [
    ...(v.semiSpaceMiB === undefined ? [] : [`--max-semi-space-size=${v.semiSpaceMiB}`]),
    ...(v.heapGrowingPercent === undefined ? [] : [`--heap-growing-percent=${v.heapGrowingPercent}`]),
    ...(v.optimizeForSize ? ['--optimize-for-size'] : []),
    ...(v.noSparkplug ? ['--no-sparkplug'] : []),
  ];
}

/**
 * The supervisor's own process was started by the user's `node` command, so its flags are set
 * here too, once it has loaded everything: it forks, watches and counts, and allocates little
 * from then on. V8 reads these two at each collection: the supervisor's PSS after start-up
 * 95 → 56 MiB. Workers do not inherit them (they get process.execArgv).
 */
export function tuneV8ForSupervising(): void {
  v8.setFlagsFromString('--optimize-for-size');
  v8.setFlagsFromString('--heap-growing-percent=20');
  v8.setFlagsFromString('--no-sparkplug');
}

/**
 * glibc's malloc gives each thread that allocates its own arena (up to 8 per core), and freed
 * memory stays in the arena that held it: a worker's libuv and V8 helper threads each kept a few
 * MiB. Two arenas: peak PSS of the service 293–300 → 282–294 MiB at the same CPU per message;
 * one arena: 235 → 228/229 MiB untrained, 269 → 259 trained, the scans' CPU paired in process
 * unchanged (docs/tuning.md). Most of a worker's allocations are V8's own pages, not malloc's,
 * and glibc's per-thread cache serves the helper threads' small blocks without the arena lock.
 * glibc reads the variable when the process starts, so workers get it at the fork; an
 * operator's own value wins.
 */
export function workerMallocEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return env.MALLOC_ARENA_MAX === undefined ? { MALLOC_ARENA_MAX: '1' } : {};
}

