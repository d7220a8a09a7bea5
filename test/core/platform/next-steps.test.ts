// The platform's next steps, as the owner reads them here: no doubled numbers, and the Go provider's
// commands turned into this app's places and `swan-provider` commands.
import { describe, expect, it } from 'vitest';
import { cleanNextStep, cleanNextSteps } from '../../../src/core/platform/next-steps';
import statuses from '../../../src/cli/dev-hub-fixtures/provider-status.json' with { type: 'json' };

describe('cleanNextStep', () => {
  it('drops the numbering the platform puts on each step (the console numbers them)', () => {
    expect(cleanNextStep('1. Wait for admin review (typically 1-3 business days)')).toBe('Wait for admin review (typically 1-3 business days)');
    expect(cleanNextStep('1. 1. Deposit collateral once approved')).toBe('Deposit collateral once approved');
    expect(cleanNextStep('2) - Deposit')).toBe('Deposit');
  });

  it("turns the Go provider's commands into this app's buttons and commands", () => {
    const step = cleanNextStep("1. Run 'computing-provider inference request-approval' (or request approval on your provider page)");
    expect(step).not.toMatch(/computing-provider|^\d/);
    expect(step).toContain('swan-provider account request-approval');
    expect(step).toMatch(/^Use "Ask for approval"/);
    expect(cleanNextStep('Run computing-provider inference deposit to deposit collateral')).toContain('swan-provider account collateral');
    expect(cleanNextStep('Check with `computing-provider inference status`')).toContain('swan-provider account');
    expect(cleanNextStep("Start the provider: 'computing-provider run'")).toContain('swan-provider run');
  });

  it('leaves a command this app has no counterpart of as the platform wrote it', () => {
    expect(cleanNextStep("Run 'computing-provider ubi daemon'")).toBe("Run 'computing-provider ubi daemon'");
  });

  it('drops empty steps and repeats', () => {
    expect(cleanNextSteps(['1. Wait', '2. Wait', '3. ', 'Deposit'])).toEqual(['Wait', 'Deposit']);
  });

  it("cleans every step of the dev hub's pending status (the doubled-number example of issue 44)", () => {
    const steps = cleanNextSteps(statuses.pending.next_steps);
    expect(steps).toHaveLength(3);
    for (const s of steps) expect(s).not.toMatch(/^\d+\.|computing-provider/);
  });
});
