// Number, time and action formatting shared by the pages.

export const fmtInt = (n: number): string => n.toLocaleString('en');
export const fmtScore = (n: number): string => (Math.round(n * 100) / 100).toFixed(2);
export const fmtSigned = (n: number): string => `${n >= 0 ? '+' : ''}${fmtScore(n)}`;

export function fmtDuration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d > 0) return `${d}d ${h}h ${m}m`;
  if (h > 0) return `${h}h ${m}m`;
  return `${m}m ${s % 60}s`;
}

export const fmtTime = (unixSeconds: number): string => new Date(unixSeconds * 1000).toLocaleString('en-GB', { hour12: false });

export function fmtBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** A CSS class per action, for its colour (styles.css). */
export const actionClass = (action: string): string => `action action-${action.replace(/\s+/g, '-')}`;
