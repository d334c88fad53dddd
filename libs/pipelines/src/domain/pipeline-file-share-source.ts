/**
 * The `file_share` source of a pipeline (docs/pipelines.md, The file-share source): the files under a directory
 * of the server's file system (an SMB or NFS share once the OS has mounted it). The reference does not define
 * it; the spec says it exists and leaves its fields open. Pure shape checks only: whether `path` lies under a
 * directory the operator allows (PIPELINE_FILE_SHARE_ROOTS) is checked by the client, which can read the disk.
 */
import { isInt, type Problem } from './pipeline-source';

export interface FileShareSourceSettings {
  readonly type: 'file_share';
  /** An absolute directory, under one of the operator's roots. */
  readonly path: string;
  /** Globs on the path relative to `path` (`**\/*.pdf`): a file must match one (when any) and none of `exclude`. */
  readonly include: readonly string[];
  readonly exclude: readonly string[];
  /** Files larger than this are skipped. */
  readonly max_bytes: number;
  /** Files read at most (a run past it is cut and its sync state not written). */
  readonly max_files: number;
  /** No generic `auth`: present so code over every source can read `source.auth` (always absent here). */
  readonly auth?: undefined;
}

export const FILE_SHARE_DEFAULTS = { max_bytes: 26_214_400, max_files: 100_000 } as const;
const FIELDS = ['type', 'path', 'include', 'exclude', 'max_bytes', 'max_files'];

function globs(v: unknown, field: string): Problem | null {
  if (v === undefined) return null;
  if (!Array.isArray(v) || v.length > 100) return [field, 'must be a list of at most 100 globs'];
  for (const [i, g] of v.entries()) if (typeof g !== 'string' || g.length === 0 || g.length > 1024 || g.includes('\0')) return [`${field}[${i}]`, 'must be a glob such as **/*.pdf (at most 1024 characters)'];
  return null;
}

/** The settings, shape-checked; `base`: the stored source a PATCH merges into (top-level fields). */
export function parseFileShareSource(v: Record<string, unknown>, base?: FileShareSourceSettings): FileShareSourceSettings | Problem {
  const extra = Object.keys(v).find((k) => !FIELDS.includes(k));
  if (extra) return [`source.${extra}`, 'is not a field of the file_share source'];
  const path = v.path ?? base?.path;
  if (typeof path !== 'string' || path.length === 0 || path.length > 4096 || !path.startsWith('/') || path.includes('\0')) return ['source.path', 'is required: an absolute directory path on the server (at most 4096 characters)'];
  if (path.split('/').some((part) => part === '..' || part === '.')) return ['source.path', 'must not contain "." or ".." segments'];
  const problem =
    globs(v.include, 'source.include') ??
    globs(v.exclude, 'source.exclude') ??
    (v.max_bytes !== undefined && !isInt(v.max_bytes, 1, 104_857_600) ? ['source.max_bytes', 'must be an integer from 1 to 104857600'] : null) ??
    (v.max_files !== undefined && !isInt(v.max_files, 1, 1_000_000) ? ['source.max_files', 'must be an integer from 1 to 1000000'] : null);
  if (problem) return problem;
  return {
    type: 'file_share',
    path: path.length > 1 ? path.replace(/\/+$/, '') : path,
    include: (v.include as string[] | undefined) ?? base?.include ?? [],
    exclude: (v.exclude as string[] | undefined) ?? base?.exclude ?? [],
    max_bytes: (v.max_bytes as number | undefined) ?? base?.max_bytes ?? FILE_SHARE_DEFAULTS.max_bytes,
    max_files: (v.max_files as number | undefined) ?? base?.max_files ?? FILE_SHARE_DEFAULTS.max_files,
  };
}
