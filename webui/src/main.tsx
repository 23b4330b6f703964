// Entry point: the theme before the first paint, then the shell.

import { render } from 'preact';
import { Shell } from './shell';
import { applyStoredTheme } from './theme';
import './styles.css';

applyStoredTheme();
render(<Shell />, document.getElementById('app')!);
