// A GGUF (or any model's files) from the Hugging Face Hub into the same models folder, through the same
// verified download: the file list comes from the Hub's API via @huggingface/hub's listFiles
// (GET {hub}/api/models/{repo}/tree/{revision}?recursive=true, paged by its Link header), whose LFS entries carry
// the file's sha256 (`lfs.oid`) and size; the bytes from GET {hub}/{repo}/resolve/{revision}/{path} (a redirect
// to the Hub's CDN, followed). A file stored in git itself (no LFS) has only a git blob id: it is hashed here
// and the download is "hashed", not "verified". The Hub's answers are bounded (a list over 8 MB is refused).
import { listFiles } from '@huggingface/hub';
import { CodedError } from '../../shared/bridge-error';
import { safeRelativePath, type RepositoryFiles } from './repository';

export const HF_HUB_URL = 'https://huggingface.co';
const MAX_LIST_BYTES = 8 * 1024 * 1024;
const MAX_FILES = 20_000;

export type HuggingFaceErrorCode = 'hf_unreachable' | 'hf_no_such_file' | 'hf_not_a_repo';

export class HuggingFaceError extends CodedError<HuggingFaceErrorCode> {
  override name = 'HuggingFaceError';
}

/** "org/name" as the Hub spells a repository id. */
export const HF_REPO = /^[A-Za-z0-9][\w.-]{0,95}\/[\w.-]{1,96}$/;

export interface HuggingFaceSource {
  repo: string;
  revision?: string;
  /** Only these files (exact paths, or `*.gguf`-style globs); default every file. */
  include?: string[];
  hubUrl?: string;
  accessToken?: string;
}

/** A fetch that refuses a body over MAX_LIST_BYTES before the library parses it, with a 30 s deadline. */
const boundedFetch: typeof fetch = async (input, init) => {
  const res = await fetch(input, { ...init, signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  if (text.length > MAX_LIST_BYTES) throw new HuggingFaceError('hf_unreachable', `the Hub's file list is over ${MAX_LIST_BYTES / 1024 / 1024} MB`);
  return new Response(text, { status: res.status, statusText: res.statusText, headers: res.headers });
};

function globToRegExp(glob: string): RegExp {
  return new RegExp(
    `^${glob
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '[^/]*')
      .replace(/\?/g, '[^/]')}$`,
    'i',
  );
}

/** The files of a Hub repository as the downloader takes them (sha256 from LFS where there is one). */
export async function huggingFaceFiles(src: HuggingFaceSource): Promise<RepositoryFiles> {
  if (!HF_REPO.test(src.repo)) throw new HuggingFaceError('hf_not_a_repo', `"${src.repo.slice(0, 100)}" is not a Hugging Face repository id (org/name)`);
  const hub = (src.hubUrl ?? HF_HUB_URL).replace(/\/+$/, '');
  const revision = src.revision ?? 'main';
  const wanted = src.include?.map(globToRegExp);
  const files: RepositoryFiles['files'] = [];
  try {
    for await (const e of listFiles({
      repo: { type: 'model', name: src.repo },
      recursive: true,
      revision,
      hubUrl: hub,
      fetch: boundedFetch,
      ...(src.accessToken ? { accessToken: src.accessToken } : {}),
    })) {
      if (e.type !== 'file') continue;
      if (wanted && !wanted.some((re) => re.test(e.path))) continue;
      const rel = safeRelativePath(e.path);
      if (!rel) continue;
      const size = e.lfs?.size ?? e.size;
      if (!Number.isSafeInteger(size) || size < 0) continue;
      const sha = e.lfs?.oid && /^[0-9a-f]{64}$/i.test(e.lfs.oid) ? e.lfs.oid.toLowerCase() : '';
      files.push({
        filename: rel,
        hash: sha,
        sizeBytes: size,
        url: `${hub}/${src.repo}/resolve/${encodeURIComponent(revision)}/${rel.split('/').map(encodeURIComponent).join('/')}`,
      });
      if (files.length > MAX_FILES) throw new HuggingFaceError('hf_unreachable', `the Hub lists more than ${MAX_FILES} files for ${src.repo}`);
    }
  } catch (e) {
    if (e instanceof HuggingFaceError) throw e;
    const status = (e as { statusCode?: number }).statusCode;
    if (status === 404 || status === 401)
      throw new HuggingFaceError('hf_not_a_repo', `the Hugging Face Hub has no repository ${src.repo} at ${revision} that it lets us read (HTTP ${status})`);
    throw new HuggingFaceError('hf_unreachable', `could not read the file list of ${src.repo} from ${hub}: ${(e as Error).message}`);
  }
  if (files.length === 0) throw new HuggingFaceError('hf_no_such_file', `${src.repo} has no file${src.include ? ` matching ${src.include.join(', ')}` : ''}`);
  return { modelId: src.repo, files, totalSizeBytes: files.reduce((a, f) => a + f.sizeBytes, 0) };
}
