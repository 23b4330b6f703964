// The selectors framework: compile a selector text once, run it over tasks.
// Used by multimap (`type: selector`), ratelimit (bucket keys), rbl (`selector` checks),
// settings (`selector` conditions), plugins (`ctx.selector`) and the controller's
// /plugins/selectors/* endpoints.

export { compileSelector, checkSelector, combineResults, listExtractors, listTransforms } from './compile.js';
export type { CompiledSelector, SelectorResult } from './compile.js';
export { SelectorError, isSelectorError } from './errors.js';
export type { SelectorErrorCode } from './errors.js';
export { parseSelector, MAX_SELECTOR_CHARS, MAX_SELECTORS, MAX_PIPELINE, MAX_ARGS } from './parse.js';
export { setPoolVar } from './extractors.js';
export type { SelectorEnv, SelectorTask } from './task.js';
export { messageTask } from './message-task.js';
