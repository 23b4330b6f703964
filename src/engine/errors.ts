// Coded errors thrown by the engine at start-up (bad module config, dependency cycles,
// late registration). They carry a stable `code` and no HTTP status.

export type EngineErrorCode =
  | 'ENGINE_MODULE_CONFIG'
  | 'ENGINE_SEALED'
  | 'ENGINE_NOT_SEALED'
  | 'ENGINE_DUPLICATE_SYMBOL'
  | 'ENGINE_BAD_STAGE'
  | 'ENGINE_DEPENDENCY_CYCLE'
  | 'ENGINE_BAD_COMPOSITE'
  | 'ENGINE_BAD_EXPRESSION'
  | 'ENGINE_BAD_ENDPOINT';

export class EngineError extends Error {
  readonly code: EngineErrorCode;

  constructor(code: EngineErrorCode, message: string) {
    super(message);
    this.name = 'EngineError';
    this.code = code;
  }
}
