// The files a running server leaves in its data_dir for `mailsift reload`: its pid (to send it
// SIGHUP) and the outcome of its last reload (for the command to report). The outcome carries a
// sequence number, so the command can tell the answer to its own signal from an older one.

import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const PID_FILE = 'mailsift.pid';
export const RELOAD_STATUS_FILE = 'mailsift.reload.json';

export interface ReloadStatus {
  /** Pid of the supervisor that wrote it. */
  pid: number;
  /** Reloads attempted since the server started, this one included. */
  seq: number;
  /** Epoch ms the outcome was known. */
  at: number;
  ok: boolean;
  /** What happened, in one sentence. */
  message: string;
  /** Problems that refused the configuration, one per entry. */
  problems?: string[];
  /** Milliseconds from the signal to the outcome. */
  ms: number;
}

export function pidFilePath(dataDir: string): string {
  return join(dataDir, PID_FILE);
}

export function reloadStatusPath(dataDir: string): string {
  return join(dataDir, RELOAD_STATUS_FILE);
}

/** Written whole or not at all: a reader never sees half a file. */
function writeAtomically(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

export function writePidFile(dataDir: string): string {
  mkdirSync(dataDir, { recursive: true });
  const path = pidFilePath(dataDir);
  writeAtomically(path, `${process.pid}\n`);
  return path;
}

/** Removes the pid file if it is still this process's (a newer server may have replaced it). */
export function removePidFile(dataDir: string): void {
  const path = pidFilePath(dataDir);
  if (readPid(path) === process.pid) rmSync(path, { force: true });
}

export function readPid(path: string): number | undefined {
  try {
    const n = Number(readFileSync(path, 'utf8').trim());
    return Number.isInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

export function writeReloadStatus(dataDir: string, status: ReloadStatus): void {
  mkdirSync(dataDir, { recursive: true });
  writeAtomically(reloadStatusPath(dataDir), `${JSON.stringify(status)}\n`);
}

export function readReloadStatus(dataDir: string): ReloadStatus | undefined {
  try {
    const v = JSON.parse(readFileSync(reloadStatusPath(dataDir), 'utf8')) as ReloadStatus;
    return typeof v.seq === 'number' && typeof v.ok === 'boolean' ? v : undefined;
  } catch {
    return undefined;
  }
}
