// The milter v6 front end of the proxy worker: the proxy hands each
// accepted connection of a `milter: true` listener to handleMilterConnection.

export { handleMilterConnection, type MilterContext, type MilterSession } from './session.js';
export {
  milterActions,
  milterOptions,
  DEFAULT_MILTER_IDLE_TIMEOUT_MS,
  DEFAULT_MILTER_MAX_MESSAGE,
  type MilterActionType,
  type MilterOptions,
} from './options.js';
