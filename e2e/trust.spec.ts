// The Dashboard's trust cards in the real console: each served model's weights as the agent sees them. The
// e2e stack serves a simulated engine (read as vLLM) that names no folder for its models, so each
// model is shown as not provable here, with the reason.
import { expect, test } from './support/fixtures';

test('the weights card lists each served model, and why its weights cannot be proved here', async ({ app, stack }) => {
  await expect(app.getByTestId('link-state')).toHaveText('Connected');
  const card = app.getByTestId('weights-card');
  for (const model of stack.engine.models) {
    const row = card.locator(`[data-testid="weights-model"][data-model="${model}"]`);
    await expect(row).toHaveAttribute('data-state', 'unlocated');
    await expect(row.getByTestId('weights-reason')).toContainText("does not say where this model's files are");
  }
  // No register ack of the dev hub names registered models: no hub view card.
  await expect(app.getByTestId('hub-view-card')).toHaveCount(0);
});
