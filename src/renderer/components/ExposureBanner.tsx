// The browser console's LAN warning: when the agent serves the console on a non-loopback address over
// plain HTTP it marks its answers with `X-Swan-Exposure: lan`; this page then says so, every time.
// The desktop app (IPC, no HTTP) never shows it.
import { useEffect, useState } from 'react';

export function ExposureBanner() {
  const [lan, setLan] = useState(false);
  useEffect(() => {
    if (window.swan) return;
    let live = true;
    // Any answer carries the mark, a refused one too (this asks without the page secret).
    fetch('/session', { credentials: 'same-origin', cache: 'no-store' })
      .then((r) => live && setLan(r.headers.get('x-swan-exposure') === 'lan'))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, []);
  if (!lan) return null;
  return (
    <div className="banner banner-warn" role="alert" data-testid="exposure-banner">
      Insecure: this console is reachable from other machines on your network over plain HTTP, which is not encrypted. Use it only on a network you trust, or
      run the agent with <code>--console 127.0.0.1:PORT</code> and reach it through an SSH tunnel.
    </div>
  );
}
