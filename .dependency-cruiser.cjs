// The layers of src/ (docs/layers.md explains each one), checked by test/architecture/layers.test.ts
// in `npm test` and by hand with `npx depcruise src`.
//
// A folder may import its own files and folders on a LOWER floor, never one on its own floor or
// above: floor by floor the graph cannot loop, and a new upward import fails the check.
//
//   13  cli
//   12  workers              the processes: supervisor, normal/controller/proxy workers
//   11  config               loads mailsift.yaml, assembling each layer's own schema
//   10  proxy
//    9  engine, protocol, client, fuzzy-storage
//    8  modules              built-in rule modules; see "the door" below
//    7  module-helpers       helpers several modules share (auth results, local addresses…)
//    6  plugin-api           the door: public types and defineModule
//    5  selectors
//    4  rule-libs            the Bayes and fuzzy-client libraries written for modules
//    3  net, observability   net: the task network runtime (DNS, HTTP, TCP, UDP, Redis)
//    2  storage, maps, http
//    1  message, crypto
//    0  core                 logger, scan contract, verdict, records, deadline, config values
//
// The door: a module imports only the plugin API, core, message, module-helpers and rule-libs
// (the lower layers meant for modules), and never another module's folder. modules/index.ts,
// the list of built-in modules, is the one file that names every module.

/** @type {string[][]} floors from the ground up; each entry is a folder under src/ */
const FLOORS = [
  ['core'],
  ['message', 'crypto'],
  ['storage', 'maps', 'http'],
  ['net', 'observability'],
  ['rule-libs'],
  ['selectors'],
  ['plugin-api'],
  ['module-helpers'],
  ['modules'],
  ['engine', 'protocol', 'client', 'fuzzy-storage'],
  ['proxy'],
  ['config'],
  ['workers'],
  ['cli'],
];

/** What a module may import besides its own folder. */
const MODULE_DOOR = ['plugin-api', 'core', 'message', 'module-helpers', 'rule-libs'];

const folders = (list) => `^src/(${list.join('|')})/`;

/** One rule per folder: nothing on its own floor (but itself) or above it. */
const upwardRules = FLOORS.flatMap((floor, level) =>
  floor.map((folder) => {
    const notBelow = [...floor.filter((f) => f !== folder), ...FLOORS.slice(level + 1).flat()];
    return {
      name: `layer-${folder}`,
      comment: `src/${folder}/ is on floor ${level}: it may import only folders on floors below it (${FLOORS.slice(0, level).flat().join(', ') || 'none'})`,
      severity: 'error',
      from: { path: `^src/${folder}/` },
      to: { path: folders(notBelow) },
    };
  }),
);

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...upwardRules,
    {
      name: 'unknown-folder',
      comment: 'every folder under src/ has a floor; a new one is added to FLOORS (and docs/layers.md)',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/', pathNot: folders(FLOORS.flat()) },
    },
    {
      name: 'module-door',
      comment: `a module imports only ${MODULE_DOOR.join(', ')} and its own folder`,
      severity: 'error',
      from: { path: '^src/modules/[^/]+/' },
      to: { path: '^src/', pathNot: [folders(MODULE_DOOR), '^src/modules/'] },
    },
    {
      name: 'module-to-module',
      comment: "a module never imports another module's folder: shared code moves to module-helpers or rule-libs",
      severity: 'error',
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: '^src/modules/', pathNot: '^src/modules/$1/' },
    },
    {
      name: 'resolvable',
      comment: 'an import the checker cannot resolve would slip past every rule above',
      severity: 'error',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
    {
      // Loops between folders cannot happen under the floor rules. Loops among one folder's own
      // files (engine/, http/, a few modules) predate this check: reported, not yet failed on.
      name: 'no-circular-within-folder',
      comment: 'files of one folder import each other in a loop',
      severity: 'warn',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    includeOnly: '^src/',
    // Type-only imports count: a type pointing up ties the layers as much as a value does.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.d.ts', '.js'] },
    doNotFollow: { path: 'node_modules' },
  },
};
