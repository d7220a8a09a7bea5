import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { getBridge, getConnection } from './bridge';
import { startSync } from './store/sync';
import { startBrowserAlerts } from './lib/browser-alerts';
import './styles/theme.css';
import './styles/app.css';
import './styles/onboarding.css';
import './styles/responsive.css';

startSync(getBridge(), getConnection());
startBrowserAlerts(getBridge().transport);

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element');
createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
