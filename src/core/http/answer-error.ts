// An outside answer that is JSON but not what was asked for. Shared by the readers of answers from
// different parties (the platform's catalogue, an Ollama engine's /api/tags), so it lives below both.
import { CodedError } from '../../shared/bridge-error';

/** Why an answer that is JSON cannot be read: it lacks the list of models (`field` is where it should be). */
export type AnswerErrorCode = 'no_model_list';

/** Thrown by the readers of answers (the catalogue, Ollama's /api/tags), not by the fetch that brought the answer. */
export class AnswerError extends CodedError<AnswerErrorCode> {
  override name = 'AnswerError';
}
