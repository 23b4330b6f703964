// The shapes of the two function tables: extractors (take data out of a task) and transforms
// (change a value in the pipeline). Both are plain records, listed as they are by
// /plugins/selectors/list_extractors and list_transforms (functions left out).

import type { CheckedArgs } from './args.js';
import type { SelectorArg } from './parse.js';
import type { SelectorEnv, SelectorTask } from './task.js';
import type { SelectorType, Typed } from './values.js';

export interface Extractor {
  description: string;
  /** Checks and coerces the arguments at compile time; absent: any arguments, kept as written. */
  args?: (args: SelectorArg[], name: string) => CheckedArgs;
  get(task: SelectorTask, args: CheckedArgs, env: SelectorEnv): Typed | undefined;
}

/** What a transform accepts: a concrete type, or `list` for any list as a whole. */
export type AcceptedType = SelectorType | 'list';

export interface Transform {
  description: string;
  types: readonly AcceptedType[];
  /** Type of each result when the transform is mapped over a list's elements. */
  mapType?: 'string';
  args?: (args: SelectorArg[], name: string) => CheckedArgs;
  process(value: unknown, type: SelectorType, args: CheckedArgs, env: SelectorEnv): Typed | undefined;
}
