// The table shell every card's table uses: the column heads, numbers right-aligned, and, where the table
// is wider than its card (a phone, a narrow window), one block a row instead of columns, so nothing is
// cut off or scrolled sideways. Rows are the caller's; a model's name heads its row with ModelCell.
import { useCallback, useLayoutEffect, useRef, useState, type ReactNode } from 'react';

export interface Column {
  label: ReactNode;
  /** Right-aligned figures. */
  num?: boolean;
  /** Heard by screen readers, not shown (a column of buttons). */
  srOnly?: boolean;
}

/** `dense`: many columns (Usage per model): tighter cells, column heads wrap, so it fits a 1024 px window. */
export function DataTable({
  columns,
  testId,
  className,
  dense,
  children,
}: {
  columns: Array<Column | false>;
  testId?: string;
  className?: string;
  dense?: boolean;
  children: ReactNode;
}) {
  const shown = columns.filter((c): c is Column => c !== false);
  const ref = useRef<HTMLTableElement>(null);
  const box = useRef<HTMLDivElement>(null);
  // The width the table needed side by side when it last did not fit.
  const natural = useRef(0);
  const [stacked, setStacked] = useState(false);
  const cls = ['table', 'table-stack', stacked && 'is-stacked', dense && 'table-dense', className].filter(Boolean).join(' ');
  const fit = useCallback(() => {
    const t = ref.current;
    const b = box.current;
    if (!t || !b) return;
    if (!t.classList.contains('is-stacked')) {
      if (t.scrollWidth > b.clientWidth + 1) {
        natural.current = t.scrollWidth;
        setStacked(true);
      }
    } else if (b.clientWidth >= natural.current) setStacked(false);
  }, []);
  // A table wider than its card stacks, one block a row with each cell under its column's name
  // (responsive.css reads data-label), instead of hiding columns behind a sideways scroll.
  useLayoutEffect(() => {
    const labels = shown.map((c) => (c.srOnly || typeof c.label !== 'string' ? '' : c.label));
    for (const row of ref.current?.tBodies[0]?.rows ?? []) {
      [...row.cells].forEach((cell, i) => {
        if (cell.tagName === 'TD' && cell.dataset.label !== labels[i]) cell.dataset.label = labels[i] ?? '';
      });
    }
    fit();
  });
  useLayoutEffect(() => {
    if (!box.current || typeof ResizeObserver === 'undefined') return;
    const ro = new ResizeObserver(fit);
    ro.observe(box.current);
    return () => ro.disconnect();
  }, [fit]);
  return (
    <div className="table-scroll" ref={box}>
      <table className={cls} data-testid={testId} data-stacked={stacked} ref={ref}>
        <thead>
          <tr>
            {shown.map((c, i) => (
              <th key={i} scope="col" className={c.num ? 'num' : undefined}>
                {c.srOnly ? <span className="sr-only">{c.label}</span> : c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/** A model's id as its row's header cell. */
export function ModelCell({ model, children }: { model: string; children?: ReactNode }) {
  return (
    <th scope="row" className="mono">
      {model}
      {children}
    </th>
  );
}
