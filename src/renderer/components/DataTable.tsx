// The table shell every card's table uses: the column heads, numbers right-aligned, and a scroll box so
// a wide table never pushes past its card (1024×640). Rows are the caller's; a model's name heads its
// row with ModelCell.
import type { ReactNode } from 'react';

export interface Column {
  label: ReactNode;
  /** Right-aligned figures. */
  num?: boolean;
  /** Heard by screen readers, not shown (a column of buttons). */
  srOnly?: boolean;
}

/** `dense`: many columns (Usage per model): tighter cells, column heads wrap, so it fits a 1024 px window. */
export function DataTable({ columns, testId, className, dense, children }: { columns: Array<Column | false>; testId?: string; className?: string; dense?: boolean; children: ReactNode }) {
  const cls = ['table', dense && 'table-dense', className].filter(Boolean).join(' ');
  return (
    <div className="table-scroll">
      <table className={cls} data-testid={testId}>
        <thead>
          <tr>
            {columns
              .filter((c): c is Column => c !== false)
              .map((c, i) => (
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
