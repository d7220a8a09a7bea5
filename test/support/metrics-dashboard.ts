// The Grafana dashboard's queries and the metric names they read (PromQL as far as the dashboard uses it),
// for the dashboard's unit check and the e2e fleet spec that runs them against a real Prometheus.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const DASHBOARD_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'grafana', 'swan-provider-fleet.json');

/** Series Prometheus makes itself for every scrape target (not the agent's). */
export const PROMETHEUS_OWN = new Set(['up']);

const PROMQL_WORDS = new Set([
  // aggregations and their modifiers
  'sum',
  'min',
  'max',
  'avg',
  'count',
  'stddev',
  'stdvar',
  'topk',
  'bottomk',
  'quantile',
  'count_values',
  'group',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
  'le',
  // functions
  'rate',
  'irate',
  'increase',
  'delta',
  'idelta',
  'deriv',
  'histogram_quantile',
  'label_values',
  'label_replace',
  'label_join',
  'abs',
  'ceil',
  'floor',
  'round',
  'clamp',
  'clamp_min',
  'clamp_max',
  'time',
  'timestamp',
  'vector',
  'scalar',
  'sort',
  'sort_desc',
  'avg_over_time',
  'max_over_time',
  'min_over_time',
  'sum_over_time',
  'count_over_time',
  'last_over_time',
  'absent',
  'changes',
  'resets',
]);

/** Every PromQL query of the dashboard: panel targets (in rows too) and query variables. */
export function dashboardQueries(dash: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown, key?: string): void => {
    if (Array.isArray(v)) v.forEach((x) => walk(x));
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k);
    else if (typeof v === 'string' && (key === 'expr' || (key === 'query' && /[a-z_]+\(|\{/.test(v)))) out.push(v);
  };
  walk(dash);
  return [...new Set(out)];
}

/** The metric names a PromQL expression reads: identifiers left once strings, label matchers, grouping lists and ranges are removed. */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    // label_values(series, label): the second argument is a label name.
    .replace(/label_values\(([^,]*),\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)/g, '$1')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ');
  const names = bare.match(/[a-zA-Z_:][a-zA-Z0-9_:]*/g) ?? [];
  return [...new Set(names.filter((n) => !PROMQL_WORDS.has(n) && !/^\d/.test(n)))];
}
