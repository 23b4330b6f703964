// Kept so `./workers/controller.js` imports keep working: the controller lives in
// workers/controller/ (index.ts composes the endpoint families).

export { createControllerHandler, normalisePath, startControllerWorker } from './controller/index.js';
export type { ControllerHandler, ControllerHandlerOptions, ControllerWorkerOptions, RunningWorker } from './controller/index.js';
