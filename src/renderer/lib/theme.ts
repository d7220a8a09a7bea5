// Applies the theme setting: 'system' follows prefers-color-scheme (in CSS), the others force it.
import type { SettingsView } from '../../shared/bridge';

export function applyTheme(theme: SettingsView['theme']): void {
  const root = document.documentElement;
  if (theme === 'system') delete root.dataset.theme;
  else root.dataset.theme = theme;
}
