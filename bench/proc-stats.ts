// CPU time and memory of a server's process tree, read from /proc (Linux only): the supervisor
// and every descendant (cluster workers, Rspamd's forked workers), so multi-process servers are
// measured whole.
import { readFileSync, readdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

/** Clock ticks per second for utime/stime; 100 on every Linux we run on, but ask once. */
const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

interface ProcInfo {
  pid: number;
  ppid: number;
  /** utime + stime + cutime + cstime, in ms (children already reaped still count). */
  cpuMs: number;
}

function readStat(pid: number): ProcInfo | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // The command name is in parentheses and may contain spaces: split after the last ')'.
    const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(rest[11]) + Number(rest[12]) + Number(rest[13]) + Number(rest[14]);
    return { pid, ppid: Number(rest[1]), cpuMs: (ticks * 1000) / CLK_TCK };
  } catch {
    return undefined;
  }
}

/** The parent of `pid`, or undefined once it has exited. */
export function parentPid(pid: number): number | undefined {
  return readStat(pid)?.ppid;
}

/** The given roots and all their live descendants. */
export function processTree(roots: number[]): number[] {
  const all: ProcInfo[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const p = readStat(Number(d));
    if (p) all.push(p);
  }
  const inTree = new Set(roots.filter((r) => all.some((p) => p.pid === r)));
  let grew = true;
  while (grew) {
    grew = false;
    for (const p of all) {
      if (!inTree.has(p.pid) && inTree.has(p.ppid)) {
        inTree.add(p.pid);
        grew = true;
      }
    }
  }
  return [...inTree];
}

/** Total CPU ms used so far by the tree under `roots`. */
export function treeCpuMs(roots: number[]): number {
  return cpuMsOf(processTree(roots));
}

/** CPU ms used so far by each of these processes (and its reaped children); gone ones are left out. */
export function cpuMsByPid(pids: number[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of pids) {
    const ms = readStat(pid)?.cpuMs;
    if (ms !== undefined) out.set(pid, ms);
  }
  return out;
}

/** Total CPU ms used so far by exactly these processes (and their reaped children). */
export function cpuMsOf(pids: number[]): number {
  let sum = 0;
  for (const pid of pids) sum += readStat(pid)?.cpuMs ?? 0;
  return sum;
}

/**
 * Resident memory of the tree right now, in bytes. Forked workers share pages with their parent,
 * so plain RSS would count shared code once per process; PSS (proportional set size) splits each
 * shared page between its sharers, and the sum is the memory the tree really holds. Falls back to
 * VmRSS where smaps_rollup is missing or unreadable.
 */
export function treeRssBytes(roots: number[]): number {
  return rssBytesOf(processTree(roots));
}

/** A process's PSS from /proc/<pid>/smaps_rollup, whole and its anonymous and file-backed parts, KiB. */
export interface PssParts {
  pssKiB: number;
  anonKiB: number;
  fileKiB: number;
}

/** PssParts of `pid`; undefined when smaps_rollup cannot be read (an exited process, an old kernel). */
export function pssParts(pid: number): PssParts | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/smaps_rollup`, 'latin1');
  } catch {
    return undefined;
  }
  const field = (k: string): number | undefined => {
    const m = new RegExp(`^${k}:\\s+(\\d+)\\s+kB`, 'm').exec(text);
    return m ? Number(m[1]) : undefined;
  };
  const pss = field('Pss');
  return pss === undefined ? undefined : { pssKiB: pss, anonKiB: field('Pss_Anon') ?? 0, fileKiB: field('Pss_File') ?? 0 };
}

/** Resident memory (PSS, else RSS) of exactly these processes, in bytes. */
export function rssBytesOf(pids: number[]): number {
  let sum = 0;
  for (const pid of pids) {
    const parts = pssParts(pid);
    if (parts) {
      sum += parts.pssKiB * 1024;
      continue;
    }
    try {
      const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
      if (m) sum += Number(m[1]) * 1024;
    } catch { /* the process exited between listing and reading */ }
  }
  return sum;
}

/** PSS of one process in KiB (VmRSS where smaps_rollup cannot be read); 0 once it has exited. */
export function pssKiB(pid: number): number {
  return Math.round(rssBytesOf([pid]) / 1024);
}

/** The whole tree's memory at its peak sample, process by process. */
export interface PssPeak {
  /** Summed PSS of every process at the sample where the sum was highest, KiB. */
  totalKiB: number;
  /** That sample, process by process: [role, KiB], largest first. */
  processes: Array<[string, number]>;
  /** Each role's own peak over the run (summed over its processes per sample), KiB. */
  rolePeakKiB: Record<string, number>;
}

/**
 * Samples the server's processes until stopped; the peak is the highest summed PSS seen, with
 * what each process held at that moment. Each sample reads /proc (the pids' smaps_rollup, and
 * every process's stat when `pids` walks the tree), a few ms of the benchmark process's CPU on
 * the cores the server needs: 4 samples a second keep that under 2 %.
 */
export class PssSampler {
  #peak: PssPeak = { totalKiB: 0, processes: [], rolePeakKiB: {} };
  readonly #timer: NodeJS.Timeout;
  /** `pids`: every process to count, exactly; `roleOf` names each one in the breakdown. */
  constructor(readonly pids: () => number[], readonly roleOf: (pid: number) => string, intervalMs = 250) {
    this.sample();
    this.#timer = setInterval(() => this.sample(), intervalMs);
    this.#timer.unref();
  }
  sample(): void {
    const processes: Array<[string, number]> = [];
    const byRole: Record<string, number> = {};
    let total = 0;
    for (const pid of this.pids()) {
      const kib = pssKiB(pid);
      if (kib === 0) continue;
      const role = this.roleOf(pid);
      processes.push([role, kib]);
      byRole[role] = (byRole[role] ?? 0) + kib;
      total += kib;
    }
    for (const [role, kib] of Object.entries(byRole)) this.#peak.rolePeakKiB[role] = Math.max(this.#peak.rolePeakKiB[role] ?? 0, kib);
    if (total > this.#peak.totalKiB) {
      this.#peak.totalKiB = total;
      this.#peak.processes = processes.sort((a, b) => b[1] - a[1]);
    }
  }
  stop(): PssPeak {
    clearInterval(this.#timer);
    this.sample();
    return this.#peak;
  }
}

/** The role of one of the reference Rspamd's processes (its process title), or its redis. */
export function rspamdRole(pid: number): string {
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'latin1').replace(/\0+$/, '').replace(/\0/g, ' ');
    if (cmd.startsWith('redis-server')) return 'redis';
    const m = /^rspamd: ([a-z_ ]+?) process/.exec(cmd);
    return m ? m[1]!.replace(' ', '-') : 'other';
  } catch {
    return 'other';
  }
}

/** What a mailsift process is: the supervisor, or the role its supervisor forked it for. */
export type ProcessRole = 'supervisor' | 'normal' | 'controller' | 'fuzzy' | 'proxy' | 'other';

/** The role of `pid` in the tree under `supervisor`, read from the worker's environment (MAILSIFT_WORKER_ROLE). */
export function processRole(pid: number, supervisor: number): ProcessRole {
  if (pid === supervisor) return 'supervisor';
  try {
    const m = /(?:^|\0)MAILSIFT_WORKER_ROLE=([a-z]+)/.exec(readFileSync(`/proc/${pid}/environ`, 'latin1'));
    const r = m?.[1];
    return r === 'normal' || r === 'controller' || r === 'fuzzy' || r === 'proxy' ? r : 'other';
  } catch {
    return 'other';
  }
}

export interface ProcessSample {
  pid: number;
  /** Resident set size (VmRSS), KiB. */
  rssKiB: number;
  /** Peak resident set size so far (VmHWM), KiB. */
  hwmKiB: number;
  /** utime + stime, ms. */
  cpuMs: number;
}

/** RSS, peak RSS and CPU of one process; undefined once it has exited. */
export function sampleProcess(pid: number): ProcessSample | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'latin1');
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return {
      pid,
      rssKiB: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0),
      hwmKiB: Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0),
      cpuMs: ((Number(rest[11]) + Number(rest[12])) * 1000) / CLK_TCK,
    };
  } catch {
    return undefined;
  }
}
