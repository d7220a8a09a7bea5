// A transcription as engines take it. The hub sends /v1/audio/transcriptions as JSON, the uploaded file in
// base64 (`file`, with `filename`); OpenAI-compatible engines (vLLM, whisper servers) take the multipart
// form of OpenAI's API. The fields besides the file go as form fields; nested values as JSON text.
import crypto from 'node:crypto';
import { EngineHttpError } from './types';
import type { EngineBody } from './http';

/** OpenAI's own upload limit. */
export const MAX_AUDIO_BYTES = 25 * 1024 * 1024;

export function transcriptionUpload(body: Record<string, unknown>): EngineBody {
  const file = typeof body.file === 'string' ? Buffer.from(body.file, 'base64') : undefined;
  if (!file || file.length === 0) throw new EngineHttpError('the transcription request has no audio file (a base64 "file" field)', 400);
  if (file.length > MAX_AUDIO_BYTES) throw new EngineHttpError(`the audio file is ${file.length} bytes; the limit is ${MAX_AUDIO_BYTES}`, 413);
  const filename =
    typeof body.filename === 'string' && body.filename.trim()
      ? body.filename
          .trim()
          .replace(/["\r\n\\]/g, '_')
          .slice(0, 200)
      : 'audio';
  const boundary = `swan-${crypto.randomUUID()}`;
  const parts: Buffer[] = [];
  for (const [key, value] of Object.entries(body)) {
    if (key === 'file' || key === 'filename' || value === undefined || value === null || key === 'stream') continue;
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    parts.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${key.replace(/["\r\n]/g, '_')}"\r\n\r\n${text}\r\n`));
  }
  parts.push(
    Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="${filename}"\r\ncontent-type: application/octet-stream\r\n\r\n`),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  );
  return { bytes: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}
