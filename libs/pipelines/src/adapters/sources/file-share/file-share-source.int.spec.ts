import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { extract } from '@lib/extraction';
import type { FetchedRecord } from '../../../domain/pipeline-run';
import { fetchFileShareSource, type FileShareFetchJob } from './file-share-source';

/** The file-share source over a real directory (issue 41 #15): never a FIFO, and a cancel ends a read in flight. */
describe('fetchFileShareSource', () => {
  const base = mkdtempSync(join(tmpdir(), 'ars-share-int-'));
  const share = join(base, 'share');
  beforeAll(() => {
    mkdirSync(share);
    writeFileSync(join(share, 'notes.txt'), 'Notes.');
    execFileSync('mkfifo', [join(share, 'pipe')]);
    symlinkSync(join(share, 'pipe'), join(share, 'report.txt'));
  });
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  const job = (signal: AbortSignal, extract: FileShareFetchJob['extract'], records: FetchedRecord[]): FileShareFetchJob => ({
    source: { type: 'file_share', path: share, include: [], exclude: [], max_bytes: 4096, max_files: 100 },
    env: { PIPELINE_FILE_SHARE_ROOTS: base },
    only: null,
    known: new Set(),
    versions: null,
    extract,
    signal,
    onRecord: async (r) => void records.push(r),
  });
  const asText: FileShareFetchJob['extract'] = (file, name) => extract(file, name, { extractTables: false });

  it('reads the regular file and skips the link to a FIFO without waiting for a writer', async () => {
    const records: FetchedRecord[] = [];
    const result = await fetchFileShareSource(job(new AbortController().signal, asText, records));
    expect(records.map((r) => r.recordId)).toEqual(['notes.txt']);
    expect(result).toMatchObject({ fetched: 1, complete: true });
    expect(Object.keys(result.seen)).toEqual(['notes.txt']);
  });

  it('a retry naming the FIFO link reads nothing and ends', async () => {
    const records: FetchedRecord[] = [];
    const result = await fetchFileShareSource({ ...job(new AbortController().signal, asText, records), only: ['report.txt'] });
    expect(result).toMatchObject({ fetched: 0, complete: false });
  });

  it('ends as soon as the run is cancelled, whatever read is in flight', async () => {
    const cancel = new AbortController();
    let reading!: () => void;
    const inFlight = new Promise<void>((resolve) => (reading = resolve));
    // A read that never ends (a hung mount, a parser that never answers).
    const stuck: FileShareFetchJob['extract'] = () => (reading(), new Promise<never>(() => undefined));
    const fetching = fetchFileShareSource(job(cancel.signal, stuck, []));
    await inFlight;
    const started = Date.now();
    cancel.abort();
    expect(await fetching).toMatchObject({ fetched: 0, complete: false });
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
