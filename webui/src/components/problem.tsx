// How a page shows a failed call: a missing endpoint says so, a refusal names the level needed.

import type { ApiError } from '../api';

export function Problem({ error, what }: { error: ApiError; what: string }) {
  if (error.missing) {
    return (
      <p class="notice" role="status">
        This server does not provide <code>{error.endpoint}</code>, so {what} cannot be shown.
      </p>
    );
  }
  if (error.unauthorized) {
    return (
      <p class="notice" role="status">
        {what[0]?.toUpperCase() + what.slice(1)} needs the enable password (<code>{error.endpoint}</code> refused this session).
      </p>
    );
  }
  return (
    <p class="error" role="alert">
      Could not load {what}: {error.message}
    </p>
  );
}
