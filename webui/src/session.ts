// Who is logged in and what they may do; pages receive it with the API client (PageProps).

import type { Api } from './api';

export interface Session {
  /** True when enable-level endpoints (saves, resets, /errors) would refuse this session: no edit controls. */
  readOnly: boolean;
  /** No password was needed: a trusted (secure_ip) address or a controller without one. */
  passwordless: boolean;
  version: string;
  /** The controller's own warning (no password configured). */
  warning?: string;
}

/** What every page component receives. */
export interface PageProps {
  api: Api;
  session: Session;
}

const KEY = 'mailsift.password';

/** The password lives for the browser tab only (sessionStorage), never in localStorage. */
export const storedPassword = (): string | undefined => sessionStorage.getItem(KEY) ?? undefined;
export const storePassword = (p: string | undefined): void => (p === undefined ? sessionStorage.removeItem(KEY) : sessionStorage.setItem(KEY, p));
