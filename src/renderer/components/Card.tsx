export function Card(props: { title?: React.ReactNode; actions?: React.ReactNode; children: React.ReactNode; className?: string; testId?: string }) {
  return (
    <section className={`card ${props.className ?? ''}`} data-testid={props.testId}>
      {(props.title || props.actions) && (
        <header className="card-head">
          {props.title && <h2>{props.title}</h2>}
          {props.actions && <div className="card-actions">{props.actions}</div>}
        </header>
      )}
      {props.children}
    </section>
  );
}

export function Stat(props: { label: string; value: React.ReactNode; testId?: string }) {
  return (
    <div className="stat">
      <div className="stat-value" data-testid={props.testId}>
        {props.value}
      </div>
      <div className="stat-label">{props.label}</div>
    </div>
  );
}
