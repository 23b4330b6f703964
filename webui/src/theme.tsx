// Light, dark, or the system's choice; remembered in localStorage (a preference, not a secret).

import { useEffect, useState } from 'preact/hooks';

type Choice = 'system' | 'light' | 'dark';
const KEY = 'mailsift.theme';

export function applyStoredTheme(): void {
  const c = (localStorage.getItem(KEY) as Choice | null) ?? 'system';
  if (c === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = c;
}

export function Theme() {
  const [choice, setChoice] = useState<Choice>((localStorage.getItem(KEY) as Choice | null) ?? 'system');
  useEffect(() => {
    localStorage.setItem(KEY, choice);
    applyStoredTheme();
  }, [choice]);
  return (
    <label class="inline">
      <span class="sr-only">Theme</span>
      <select value={choice} onChange={(e) => setChoice(e.currentTarget.value as Choice)} data-testid="theme">
        <option value="system">System theme</option>
        <option value="light">Light</option>
        <option value="dark">Dark</option>
      </select>
    </label>
  );
}
