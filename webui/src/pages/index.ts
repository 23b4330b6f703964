// The page registry: one entry per page, in navigation order. To add a page, write
// pages/<id>.tsx exporting a component that takes PageProps, import it here and give it an
// entry (or replace a `planned` entry's `planned` text with its `component`). The shell builds
// the navigation and the hash routes (#/<id>) from this list and nothing else.

import type { ComponentType } from 'preact';
import type { PageProps } from '../session';
import { HistoryPage } from './history';
import { StatusPage } from './status';
import { WhatifPage } from './whatif';

export interface PageDef {
  /** URL fragment (#/<id>) and the nav entry's test id. */
  id: string;
  title: string;
  /** The page; absent while the page is only planned. */
  component?: ComponentType<PageProps>;
  /** What a planned page will do (shown in its place until it is built). */
  planned?: string;
  /** Hide the nav entry from read-only sessions (pages that only edit). */
  editOnly?: boolean;
}

export const PAGES: readonly PageDef[] = [
  { id: 'status', title: 'Status', component: StatusPage },
  { id: 'history', title: 'History', component: HistoryPage },
  { id: 'whatif', title: 'What-if', component: WhatifPage },
  { id: 'symbols', title: 'Symbols', planned: 'A searchable table of symbols and actions with groups, descriptions, weights, hit counts and average time (/symbols, /counters, /actions), editable with the what-if preview.' },
  { id: 'maps', title: 'Maps', planned: 'List, view and edit maps (/maps, /getmap, /savemap) and test a value against all maps (/plugins/maps/query).' },
  { id: 'scan', title: 'Scan & learn', planned: 'Paste or upload messages, see the verdict explained, learn spam or ham, add to or remove from fuzzy storage.' },
  { id: 'selectors', title: 'Selectors', planned: 'Test a selector on a pasted message; neural model status.' },
];

export const DEFAULT_PAGE = 'status';
