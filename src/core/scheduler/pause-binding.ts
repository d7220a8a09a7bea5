// Connects the PauseController's verdict to the Scheduler's admission.
import type { PauseState } from '../../shared/types';
import type { PauseController } from './pause';
import { PAUSED_MESSAGE, type Scheduler } from './scheduler';

/** Client-facing text for a pause. It never names the owner's programs or schedule. */
export function pauseMessage(state: PauseState): string {
  if (state.cause === 'gpu_busy') return "The provider's GPU is busy with other work, so serving is paused; try again later";
  if (state.cause === 'gpu_hot') return "The provider's GPU is cooling down, so serving is paused; try again later";
  return PAUSED_MESSAGE;
}

/** Applies the controller's current state to the scheduler now and on every change; returns an unsubscribe. */
export function bindPause(pause: PauseController, scheduler: Scheduler): () => void {
  const apply = (s: PauseState): void => {
    if (s.paused) scheduler.pause(pauseMessage(s));
    else scheduler.resume();
  };
  apply(pause.state());
  pause.on('change', apply);
  return () => {
    pause.off('change', apply);
  };
}
