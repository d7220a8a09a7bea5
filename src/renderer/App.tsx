import { useEffect } from 'react';
import { getBridge } from './bridge';
import { ConnectionBanner, Notices } from './components/Banners';
import { ExposureBanner } from './components/ExposureBanner';
import { SimulatedBanner } from './components/SimulatedBanner';
import { Sidebar } from './components/Sidebar';
import { usePage, type Page } from './lib/route';
import { applyTheme } from './lib/theme';
import { Dashboard } from './pages/Dashboard';
import { Engines } from './pages/Engines';
import { Fleet } from './pages/Fleet';
import { Logs } from './pages/Logs';
import { ModelPage } from './pages/ModelPage';
import { Onboarding } from './pages/Onboarding';
import { Requests } from './pages/Requests';
import { Settings } from './pages/Settings';
import { Usage } from './pages/Usage';
import { settingsTheme } from './store/actions';
import { useStore } from './store/store';

const PAGES: Record<Page, () => React.JSX.Element | null> = {
  dashboard: Dashboard,
  requests: Requests,
  usage: Usage,
  fleet: Fleet,
  engines: Engines,
  logs: Logs,
  settings: Settings,
  model: ModelPage,
};

export function App() {
  const appState = useStore((s) => s.appState);
  const needsOnboarding = useStore((s) => s.onboarding);
  const theme = useStore((s) => settingsTheme(s.settings));
  const page = usePage();
  useEffect(() => applyTheme(theme), [theme]);
  // A new page (or leaving onboarding with "Start serving") starts at its top, not where the last one was scrolled.
  useEffect(() => {
    document.getElementById('main')?.scrollTo(0, 0);
    window.scrollTo(0, 0);
  }, [page, needsOnboarding]);
  const PageView = PAGES[page];
  return (
    <div className="app" data-app-state={appState} data-testid="app" data-onboarding={needsOnboarding ? 'yes' : 'no'}>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      {!needsOnboarding && <Sidebar page={page} transport={getBridge().transport} />}
      <main id="main" className="main" tabIndex={-1}>
        <ConnectionBanner />
        <ExposureBanner />
        <SimulatedBanner />
        {appState === 'loading' ? (
          <p className="loading" data-testid="loading">
            Connecting to the agent…
          </p>
        ) : needsOnboarding ? (
          <Onboarding />
        ) : (
          <PageView />
        )}
      </main>
      <Notices />
    </div>
  );
}
