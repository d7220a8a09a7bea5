// A legend for series coloured by CSS classes (recharts' own legend reads `fill` props, which these
// charts do not use, so it would show the wrong colours): bars by colour, lines solid or dashed.
export function ChartLegend({ items }: { items: Array<{ label: string; swatch: 'earn' | 'cost' | 'in' | 'out' | 'line' | 'line-dashed' }> }) {
  return (
    <ul className="chart-legend" data-testid="chart-legend">
      {items.map((i) => (
        <li key={i.label}>
          <span className={`swatch swatch-${i.swatch}`} aria-hidden="true" />
          {i.label}
        </li>
      ))}
    </ul>
  );
}
