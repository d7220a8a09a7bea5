// Today's earnings on the Dashboard: the amount, or — when it is zero — why (never a bare $0.00).
import type { EarningsZeroReason } from '../../shared/views/usage';
import { fmtMoney } from '../lib/format';

const REASONS: Record<EarningsZeroReason, string> = {
  earnings_disabled: 'Earnings are not enabled for this provider yet',
  no_priced_model: 'None of your models is priced by the network',
  prices_unknown: "The network's price list could not be read",
  no_requests: 'No requests yet today',
  no_paid_requests: 'No paid hub requests yet today',
};

export function TodayEarnings({ earnings, reason }: { earnings: number; reason: EarningsZeroReason | undefined }) {
  return (
    <div className="stat">
      <div className="stat-value" data-testid="today-earnings" data-reason={reason ?? ''}>
        {reason ? <span className="muted stat-reason">{REASONS[reason]}</span> : fmtMoney(earnings)}
      </div>
      <div className="stat-label">Earnings</div>
    </div>
  );
}
