import { useState } from 'react';
import { Card, Stat } from '../components/Card';
import { GpuList } from '../components/Discovery';
import { HubNotices } from '../components/HubNotices';
import { ProviderStatusCard } from '../components/ProviderStatusCard';
import { GpuHistory } from '../components/GpuHistory';
import { GpuPanel, HostPanel, useGpuIndexes, WindowPicker, type WindowMinutes } from '../components/GpuCharts';
import { LinkCard } from '../components/LinkCard';
import { ModelsTable } from '../components/ModelsTable';
import { TodayEarnings } from '../components/TodayEarnings';
import { OperationalSummary } from '../components/OperationalSummary';
import { Performance } from '../components/Performance';
import { TrustCards } from '../components/TrustCards';
import { fmtInt } from '../lib/format';
import { useStore } from '../store/store';

function Today() {
  const today = useStore((s) => s.snapshot?.today);
  const reason = useStore((s) => s.snapshot?.todayEarningsReason);
  if (!today) return null;
  return (
    <Card title="Today" testId="today-card">
      <div className="stats">
        <Stat label="All requests" value={fmtInt(today.requests)} testId="today-requests" />
        <Stat label="Tokens in" value={fmtInt(today.tokensIn)} testId="today-tokens-in" />
        <Stat label="Tokens out" value={fmtInt(today.tokensOut)} testId="today-tokens-out" />
        <TodayEarnings earnings={today.earnings} reason={reason} />
        <Stat label="Errors" value={fmtInt(today.errors)} testId="today-errors" />
      </div>
    </Card>
  );
}

function GpuSection() {
  const [windowMinutes, setWindow] = useState<WindowMinutes>(5);
  const inventory = useStore((s) => s.snapshot?.gpu);
  const sample = useStore((s) => s.lastSample);
  const gpus = useGpuIndexes();
  return (
    <section className="section" aria-labelledby="gpu-heading">
      <div className="section-head">
        <h2 id="gpu-heading">Hardware</h2>
        <WindowPicker value={windowMinutes} onChange={setWindow} />
      </div>
      {sample && !sample.available && (
        <p className="banner banner-warn" data-testid="metrics-unavailable">
          GPU metrics unavailable{sample.reason ? `: ${sample.reason}` : ''}. Serving goes on; charts resume when the GPU tool answers again.
        </p>
      )}
      {inventory && gpus.length === 0 && (
        <Card>
          <GpuList inventory={inventory} />
        </Card>
      )}
      {gpus.map((g) => (
        <GpuPanel key={g.index} index={g.index} info={g.info} windowMinutes={windowMinutes} />
      ))}
      <HostPanel windowMinutes={windowMinutes} />
      <GpuHistory />
    </section>
  );
}

export function Dashboard() {
  const models = useStore((s) => s.snapshot?.models ?? []);
  return (
    <div className="page" data-testid="page-dashboard">
      <h1>Dashboard</h1>
      <OperationalSummary />
      <div className="grid-2">
        <LinkCard />
        <Today />
      </div>
      <div className="grid-2">
        <ProviderStatusCard />
        <HubNotices />
      </div>
      <TrustCards />
      <Card title="Models" testId="models-card">
        <ModelsTable models={models} compact />
      </Card>
      <Performance />
      <GpuSection />
    </div>
  );
}
