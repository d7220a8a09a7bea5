// Applies the theme setting. The root always carries the resolved theme (data-theme="light" | "dark"),
// so the dark palette is written once in theme.css; 'system' follows prefers-color-scheme, live.
import type { SettingsView } from '../../shared/views/settings';

const darkQuery = typeof window !== 'undefined' && window.matchMedia ? window.matchMedia('(prefers-color-scheme: dark)') : undefined;
let current: SettingsView['theme'] = 'system';

function resolve(): 'light' | 'dark' {
  if (current !== 'system') return current;
  return darkQuery?.matches ? 'dark' : 'light';
}

function render(): void {
  document.documentElement.dataset.theme = resolve();
}

darkQuery?.addEventListener('change', render);

export function applyTheme(theme: SettingsView['theme']): void {
  current = theme;
  render();
}
