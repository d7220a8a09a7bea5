// Hash routing (#/requests): works under file:// in the desktop app and over http in the console.
import { useSyncExternalStore } from 'react';

export const PAGES = ['dashboard', 'requests', 'usage', 'fleet', 'engines', 'logs', 'settings', 'model'] as const;
export type Page = (typeof PAGES)[number];

function current(): Page {
  const name = window.location.hash.replace(/^#\/?/, '').split('?')[0] ?? '';
  return (PAGES as readonly string[]).includes(name) ? (name as Page) : 'dashboard';
}

function subscribe(cb: () => void): () => void {
  window.addEventListener('hashchange', cb);
  return () => window.removeEventListener('hashchange', cb);
}

export function usePage(): Page {
  return useSyncExternalStore(subscribe, current);
}

export function go(page: Page): void {
  window.location.hash = `#/${page}`;
}

/** The model a per-model page shows (#/model?id=<model>). */
export function routeModel(): string {
  const q = window.location.hash.split('?')[1] ?? '';
  return new URLSearchParams(q).get('id') ?? '';
}

export function modelHref(model: string): string {
  return `#/model?id=${encodeURIComponent(model)}`;
}
