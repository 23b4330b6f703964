// Coded failures of the selectors framework. A bad selector string is a config error at load
// (configtest reports it) and a 500 on /plugins/selectors/check_message; both match on `code`.

export type SelectorErrorCode =
  /** The text does not follow the grammar; `position` says where. */
  | 'ERR_SELECTOR_SYNTAX'
  /** An extractor or transform name nobody defined. */
  | 'ERR_SELECTOR_UNKNOWN'
  /** Arguments a function's schema rejects (wrong count, not a number, not one of its words). */
  | 'ERR_SELECTOR_ARGS'
  /** Over one of the named caps in parse.ts. */
  | 'ERR_SELECTOR_TOO_LARGE';

export class SelectorError extends Error {
  readonly code: SelectorErrorCode;
  /** 0-based offset in the selector text where the problem was found, when it has one. */
  readonly position: number | undefined;
  constructor(code: SelectorErrorCode, message: string, position?: number) {
    super(position === undefined ? message : `${message} at position ${position}`);
    this.code = code;
    this.position = position;
    this.name = 'SelectorError';
  }
}

/** Matches on the code, not the class: a plugin may load its own copy of this file. */
export function isSelectorError(err: unknown): err is SelectorError {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('ERR_SELECTOR_');
}
