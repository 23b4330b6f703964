// mailauth's SPF, DKIM and ARC code, imported on first use rather than at module load. Importing
// it costs about 5 MiB of heap and 20 MiB of resident memory per process (its tools module pulls in
// joi, libmime, a second tldts and node:https), and only the processes that scan need it: the
// supervisor and the controller load every module to validate the configuration but never run
// these checks (docs/tuning.md, "Memory of each process"). Scan workers call
// `preloadMailauth()` at start so no scan waits for the import.

type SpfLib = typeof import('mailauth/lib/spf/index.js');
type DkimVerifyLib = typeof import('mailauth/lib/dkim/verify.js');
type DkimSignLib = typeof import('mailauth/lib/dkim/sign.js');
type ArcLib = typeof import('mailauth/lib/arc/index.js');

let spfLib: Promise<SpfLib> | undefined;
let dkimVerifyLib: Promise<DkimVerifyLib> | undefined;
let dkimSignLib: Promise<DkimSignLib> | undefined;
let arcLib: Promise<ArcLib> | undefined;

export const loadSpf = (): Promise<SpfLib> => (spfLib ??= import('mailauth/lib/spf/index.js'));
export const loadDkimVerify = (): Promise<DkimVerifyLib> => (dkimVerifyLib ??= import('mailauth/lib/dkim/verify.js'));
export const loadDkimSign = (): Promise<DkimSignLib> => (dkimSignLib ??= import('mailauth/lib/dkim/sign.js'));
export const loadArc = (): Promise<ArcLib> => (arcLib ??= import('mailauth/lib/arc/index.js'));

/** Imports all four now; a scan worker's first scans then run at full speed. */
export async function preloadMailauth(): Promise<void> {
  await Promise.all([loadSpf(), loadDkimVerify(), loadDkimSign(), loadArc()]);
}
