import type { SourceFetchJob } from '../source-job';
import { Logger } from '@nestjs/common';
import { constants } from 'node:fs';
import { lstat, open, opendir, readlink, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import picomatch from 'picomatch';
import type { FetchedRecord, PageVersion } from '../../../domain/pipeline-run';
import type { FileShareSourceSettings } from '../../../domain/pipeline-file-share-source';
import type { Problem } from '../../../domain/pipeline-source';
import { ExtractFile, fileText, readableName } from '../file-text';

/** What a run gives the file-share source (docs/pipelines.md, The file-share source). */
export type FileShareFetchJob = Pick<SourceFetchJob<FileShareSourceSettings>, 'source' | 'env' | 'only' | 'known' | 'versions' | 'extract' | 'signal' | 'onRecord'>;

const log = new Logger('pipelines');

/** The directories the operator lets pipelines read (PIPELINE_FILE_SHARE_ROOTS, separated by `:` as PATH is); none by default. */
export function fileShareRoots(env: Readonly<Record<string, string | undefined>>): string[] {
  return (env.PIPELINE_FILE_SHARE_ROOTS ?? '')
    .split(':')
    .map((r) => r.trim())
    .filter((r) => r && isAbsolute(r))
    .map((r) => (r.length > 1 ? r.replace(/\/+$/, '') : r));
}

const within = (path: string, root: string): boolean => path === root || path.startsWith(root === '/' ? '/' : root + sep);

/** The request-time check: the source is enabled and `path` lies (as written) under an allowed root. The run checks again with symlinks resolved. */
export function fileShareProblem(path: string, env: Readonly<Record<string, string | undefined>>): Problem | null {
  const roots = fileShareRoots(env);
  if (!roots.length) return ['source.type', 'the file_share source is not enabled on this server: its operator lists the readable directories in PIPELINE_FILE_SHARE_ROOTS'];
  return roots.some((r) => within(path, r)) ? null : ['source.path', `must be under a directory this server allows pipelines to read (${roots.join(', ')})`];
}

/** Size and modification time: what incremental sync compares (`etag` `<size>-<mtime ms>`). */
const versionOf = (size: number, mtimeMs: number): PageVersion => ({ etag: `${size}-${Math.trunc(mtimeMs)}`, lastModified: new Date(mtimeMs).toISOString() });

/**
 * Opening never waits: O_NONBLOCK, so a FIFO swapped in after the lstat check cannot hold the open (and a thread
 * of libuv's pool with it) until a writer comes; O_NOFOLLOW, so a link swapped in for the resolved path fails.
 * What was opened is checked again by fstat.
 */
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;

/** What a non-regular file is, for the log line that says why it was skipped. */
const kindOf = (s: { isFIFO(): boolean; isSocket(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean; isDirectory(): boolean }): string =>
  s.isFIFO() ? 'a FIFO' : s.isSocket() ? 'a socket' : s.isCharacterDevice() || s.isBlockDevice() ? 'a device' : s.isDirectory() ? 'a directory' : 'not a regular file';

/** `work`, or what `aborted` gives as soon as the run is cancelled: a read stuck in the file system does not hold the run. */
function untilAborted<T>(signal: AbortSignal, work: Promise<T>, aborted: () => T): Promise<T> {
  if (signal.aborted) return Promise.resolve(aborted());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => resolve(aborted());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * Reads the files under `path`: each resolved with its symlinks and refused unless it stays under an allowed root
 * (a link out of the share, or to a file the operator did not open, reads nothing); directories reached through
 * a symlink are not entered (cycles). Only regular files are read (a FIFO, socket or device is skipped, with
 * the reason in the log), opened by their resolved path and read up to `max_bytes`. A cancel ends the fetch at
 * once, whatever read is in flight.
 */
export async function fetchFileShareSource(job: FileShareFetchJob): Promise<{ fetched: number; seen: Record<string, PageVersion>; complete: boolean }> {
  const { source, signal } = job;
  const roots = await Promise.all(fileShareRoots(job.env).map((r) => realpath(r).catch(() => null)));
  const allowed = (p: string) => roots.some((r) => r !== null && within(p, r));
  if (fileShareProblem(source.path, job.env)) throw new Error(`${source.path} is no longer under PIPELINE_FILE_SHARE_ROOTS`);
  const top = await realpath(source.path).catch((e: NodeJS.ErrnoException) => Promise.reject(new Error(`${source.path}: ${e.code ?? e.message}`)));
  if (!allowed(top)) throw new Error(`${source.path} resolves outside PIPELINE_FILE_SHARE_ROOTS`);
  const include = source.include.length ? picomatch([...source.include], { dot: true }) : () => true;
  const exclude = source.exclude.length ? picomatch([...source.exclude], { dot: true }) : () => false;
  let fetched = 0;

  /** Reads one file (`rel` to `path`): a record, or null when it is skipped, unchanged or gone. */
  const read = async (rel: string, seen?: Record<string, PageVersion>): Promise<void> => {
    if (rel.split('/').some((p) => p === '..' || p === '.' || p === '') || job.known.has(rel)) return;
    const real = await realpath(join(top, rel)).catch(() => null);
    if (!real) return; // Gone since it was listed.
    if (!allowed(real) || !within(real, top)) return log.warn(`file_share ${source.path}: skipped "${rel}": it resolves outside the share`);
    const linked = await lstat(real).catch(() => null);
    if (!linked) return;
    if (!linked.isFile()) return log.warn(`file_share ${source.path}: skipped "${rel}": ${kindOf(linked)}, not a regular file`);
    const handle = await open(real, OPEN_FLAGS).catch(() => null);
    if (!handle) return log.warn(`file_share ${source.path}: skipped "${rel}": it cannot be opened`);
    try {
      // A link swapped in between the check and the open: what was opened is checked again (Linux names it in /proc).
      const opened = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => real);
      if (!allowed(opened) || !within(opened, top)) return log.warn(`file_share ${source.path}: skipped "${rel}": it resolves outside the share`);
      const stat = await handle.stat();
      if (!stat.isFile()) return log.warn(`file_share ${source.path}: skipped "${rel}": ${kindOf(stat)}, not a regular file`);
      const version = versionOf(stat.size, stat.mtimeMs);
      if (seen) seen[rel] = version;
      if (job.versions?.[rel]?.etag === version.etag) return;
      if (stat.size > source.max_bytes) return log.warn(`file_share ${source.path}: skipped "${rel}": ${stat.size} bytes is above max_bytes`);
      if (!readableName(rel)) return log.warn(`file_share ${source.path}: skipped "${rel}": not a file type the parser reads`);
      const buffer = Buffer.alloc(stat.size);
      const { bytesRead } = await handle.read(buffer, 0, stat.size, 0);
      const text = await fileText(job.extract, buffer.subarray(0, bytesRead), rel);
      if ('skipped' in text) return log.warn(`file_share ${source.path}: skipped "${rel}": ${text.skipped}`);
      fetched++;
      const meta = { path: rel, size: stat.size, modified_at: version.lastModified };
      await job.onRecord({ recordId: rel, title: text.title ?? rel.slice(rel.lastIndexOf('/') + 1), text: text.text, metadata: { file_share: meta, ...(Object.keys(text.metadata).length ? { file: text.metadata } : {}) } });
    } finally {
      await handle.close();
    }
  };

  if (job.only) {
    const only = job.only;
    await untilAborted(signal, (async () => {
      for (const rel of only) if (!signal.aborted) await read(rel);
    })(), () => undefined);
    return { fetched, seen: {}, complete: false };
  }
  const seen: Record<string, PageVersion> = {};
  let listed = 0;
  let cut = false;
  const walk = async (dir: string): Promise<void> => {
    for await (const entry of await opendir(join(top, dir))) {
      if (signal.aborted || cut) return;
      const rel = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(rel);
      else if ((entry.isFile() || entry.isSymbolicLink()) && include(rel) && !exclude(rel)) {
        if (++listed > source.max_files) return void (cut = true);
        await read(rel, seen);
      }
    }
  };
  await untilAborted(signal, walk(''), () => undefined);
  return { fetched, seen, complete: !signal.aborted && !cut };
}
