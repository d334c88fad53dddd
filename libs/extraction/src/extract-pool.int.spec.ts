import { isMainThread, threadId } from 'node:worker_threads';
import { pageBombPdf, zipBombDocx } from '@lib/testing';
import { fixture } from '../../../test/support/extraction-fixtures';
import { extract } from './extract';
import { ExtractionPool } from './extract-pool';
import { ExtractionError } from './extracted';
import { EXTRACTION_LIMITS } from './limits';

const kindOf = (e: unknown): string => (e instanceof ExtractionError ? e.kind : String(e));
const NO_TABLES = { extractTables: false };

/** Files parsed on the extraction pool give exactly what parsing in place gives, errors included. */
describe('ExtractionPool', () => {
  const pool = new ExtractionPool();
  afterAll(() => pool.close());

  it('parses on another thread, with the same document as in place', async () => {
    expect(isMainThread).toBe(true);
    for (const name of ['sample.pdf', 'sample.docx', 'sample.pptx', 'sample.eml']) {
      const file = fixture(name);
      const { document, threadId: parsedBy } = await pool.extractWithThread(file, name, { extractTables: true });
      expect(parsedBy).not.toBe(threadId);
      expect(document).toEqual(await extract(file, name, { extractTables: true }));
    }
  }, 60_000);

  it('keeps the error kinds: unsupported, corrupt, empty', async () => {
    const kinds = await Promise.all(
      [
        [Buffer.from('x'), 'a.exe'],
        [fixture('corrupt.docx'), 'corrupt.docx'],
        [fixture('no-text-layer.pdf'), 'no-text-layer.pdf'],
      ].map(([file, name]) => pool.extract(file as Buffer, name as string, NO_TABLES).catch((e: unknown) => e)),
    );
    expect(kinds.map(kindOf)).toEqual(['unsupported', 'corrupt', 'empty']);
  }, 60_000);

  it('fails the parses a dying worker held with a clear error, and starts a new worker for the next file', async () => {
    const held = pool.extract(fixture('sample.pdf'), 'sample.pdf', NO_TABLES).catch((e: unknown) => e);
    await pool.close();
    expect(await held).toEqual(expect.objectContaining({ kind: 'corrupt', message: expect.stringMatching(/The parser stopped while reading the file/) }));
    const { document } = await pool.extractWithThread(fixture('sample.md'), 'sample.md', NO_TABLES);
    expect(document.sections.length).toBeGreaterThan(0);
  }, 60_000);
});

/** Issue 22: a hostile file is refused within bounded memory and time, and holds one worker only. */
describe('ExtractionPool against hostile files', () => {
  const pool = new ExtractionPool({ workers: 2, timeoutMs: 1_500 });
  afterAll(() => pool.close());

  it('refuses a zip bomb docx as too large, by its declared size and, when the size lies, while inflating', async () => {
    const inflated = EXTRACTION_LIMITS.maxInflatedEntryBytes + 10 * 1024 * 1024;
    const honest = await zipBombDocx(inflated);
    const lying = await zipBombDocx(inflated, 1_000);
    expect(honest.length).toBeLessThan(200_000);
    // Both workers started first: a thread's start (its own heap, the loaded parsers) is not the bomb's cost.
    await Promise.all([pool.extract(fixture('sample.docx'), 'a.docx', NO_TABLES), pool.extract(fixture('sample.docx'), 'b.docx', NO_TABLES)]);
    const rssBefore = process.memoryUsage().rss;
    for (const file of [honest, lying]) {
      const refused = await pool.extract(file, 'bomb.docx', NO_TABLES).catch((e: unknown) => e);
      expect(kindOf(refused)).toBe('too_large');
      expect((refused as Error).message).toMatch(/inflates to more than/);
    }
    // The workers share this process's memory: inflating the entry whole would add its 60 MB (twice, as a UTF-16
    // string) and the XML tree mammoth builds from it.
    const grew = process.memoryUsage().rss - rssBefore;
    expect(grew).toBeLessThan(EXTRACTION_LIMITS.maxInflatedEntryBytes);
  }, 60_000);

  it('refuses a PDF of more pages than the limit as too large', async () => {
    const patient = new ExtractionPool({ workers: 1 });
    const refused = await patient.extract(pageBombPdf(EXTRACTION_LIMITS.maxPages + 1, 1), 'pages.pdf', NO_TABLES).catch((e: unknown) => e);
    expect(kindOf(refused)).toBe('too_large');
    await patient.close();
    expect((refused as Error).message).toMatch(/more than 2000 pages/);
  }, 60_000);

  it('refuses a file past the time limit, terminating its worker, and parses the next file', async () => {
    // 1,936 pages (under the page limit) take about a second and a half here, far past 200 ms on any machine;
    // a markdown file takes milliseconds (a worker's start is not counted).
    const strict = new ExtractionPool({ workers: 1, timeoutMs: 200 });
    const slow = strict.extract(pageBombPdf(44, 2), 'slow.pdf', NO_TABLES).catch((e: unknown) => e);
    expect(kindOf(await slow)).toBe('timeout');
    const { document } = await strict.extractWithThread(fixture('sample.md'), 'sample.md', NO_TABLES);
    expect(document.sections.length).toBeGreaterThan(0);
    await strict.close();
  }, 60_000);

  it('parses a second file while a slow one holds the other worker', async () => {
    // The slow file must outlast the limit and the quick one finish well within it, whatever the machine's speed:
    // the slow file takes about 1.5 s here (longer under load). The quick one is markdown (milliseconds): a docx,
    // ~0.1 s idle, took 0.7 s and once 1,057 ms in full test runs, past the limit, without a second worker's fault.
    const limitMs = 1000;
    const pair = new ExtractionPool({ workers: 2, timeoutMs: limitMs });
    // Both workers started and warm, so that the timing below is the parse's, not a thread's start.
    await Promise.all([pair.extract(fixture('sample.md'), 'a.md', NO_TABLES), pair.extract(fixture('sample.md'), 'b.md', NO_TABLES)]);
    const slow = pair.extract(pageBombPdf(44, 2), 'slow.pdf', NO_TABLES).catch((e: unknown) => e);
    const started = Date.now();
    await pair.extract(fixture('sample.md'), 'quick.md', NO_TABLES);
    const quickTook = Date.now() - started;
    const slowKind = kindOf(await slow);
    await pair.close();
    expect(slowKind).toBe('timeout');
    // One worker would parse them in turn: the quick file would answer only once the slow one hit its limit.
    expect(quickTook).toBeLessThan(limitMs);
  }, 60_000);
});
