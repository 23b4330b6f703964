// The page registry: one entry per page, in navigation order. To add a page, write
// pages/<id>.tsx exporting a component that takes PageProps, import it here and give it an
// entry (or replace a `planned` entry's `planned` text with its `component`). The shell builds
// the navigation and the hash routes (#/<id>) from this list and nothing else.

import type { ComponentType } from 'preact';
import type { PageProps } from '../session';
import { HistoryPage } from './history';
import { MapsPage } from './maps';
import { ScanPage } from './scan';
import { SelectorsPage } from './selectors';
import { StatusPage } from './status';
import { SymbolsPage } from './symbols';
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
  { id: 'symbols', title: 'Symbols', component: SymbolsPage },
  { id: 'maps', title: 'Maps', component: MapsPage },
  { id: 'scan', title: 'Scan & learn', component: ScanPage },
  { id: 'selectors', title: 'Selectors', component: SelectorsPage },
];

export const DEFAULT_PAGE = 'status';
