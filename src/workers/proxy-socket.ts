// A proxy bind's unix socket file left by a process that is gone. The supervisor clears them once
// before any proxy worker binds; kept apart from the proxy's code, which the supervisor never loads.

import { lstatSync, unlinkSync } from 'node:fs';
import net from 'node:net';

/**
 * Removes a unix socket file left by a process that is gone (a connect is refused); a socket
 * someone answers on, or a file that is not a socket, is left for listen() to refuse.
 */
export async function removeStaleSocket(path: string): Promise<void> {
  let isSocket = false;
  try {
    isSocket = lstatSync(path).isSocket();
  } catch {
    return; // nothing there
  }
  if (!isSocket) return;
  const inUse = await new Promise<boolean>((resolve) => {
    const s = net.connect({ path });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
  if (!inUse) unlinkSync(path);
}
