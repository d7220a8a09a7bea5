// Engine base URLs: models.json endpoints may carry /v1 or a trailing slash; we keep the bare base.

/** "http://h:8000/v1/" -> "http://h:8000". Throws on a URL that is not http(s). */
export function normalizeBaseUrl(url: string): string {
  const u = new URL(url.trim());
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`engine URL must start with http:// or https://: ${url}`);
  let p = u.pathname.replace(/\/+$/, '');
  if (p.endsWith('/v1')) p = p.slice(0, -3);
  return `${u.protocol}//${u.host}${p}`;
}
