// The table shell every card's table uses: the column heads, numbers right-aligned, and a scroll box so
// a wide table never pushes past its card (1024×640). Rows are the caller's; a model's name heads its
// row with ModelCell.
import { useLayoutEffect, useRef, type ReactNode } from 'react';

export interface Column {
  label: ReactNode;
  /** Right-aligned figures. */
  num?: boolean;
  /** Heard by screen readers, not shown (a column of buttons). */
  srOnly?: boolean;
}

/** `dense`: many columns (Usage per model): tighter cells, column heads wrap, so it fits a 1024 px window. */
export function DataTable({ columns, testId, className, dense, children }: { columns: Array<Column | false>; testId?: string; className?: string; dense?: boolean; children: ReactNode }) {
  const cls = ['table', 'table-stack', dense && 'table-dense', className].filter(Boolean).join(' ');
  const shown = columns.filter((c): c is Column => c !== false);
  const ref = useRef<HTMLTableElement>(null);
  // On a phone each row stacks, each cell under its column's name (responsive.css reads data-label).
  useLayoutEffect(() => {
    const labels = shown.map((c) => (c.srOnly || typeof c.label !== 'string' ? '' : c.label));
    for (const row of ref.current?.tBodies[0]?.rows ?? []) {
      [...row.cells].forEach((cell, i) => {
        if (cell.tagName === 'TD' && cell.dataset.label !== labels[i]) cell.dataset.label = labels[i] ?? '';
      });
    }
  });
  return (
    <div className="table-scroll">
      <table className={cls} data-testid={testId} ref={ref}>
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
