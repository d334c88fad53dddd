import { isMainThread, threadId } from 'node:worker_threads';
import { fixture } from '../../../test/support/extraction-fixtures';
import { extract } from './extract';
import { ExtractionThread } from './extract-thread';
import { ExtractionError } from './extracted';

/** Files parsed on the extraction thread give exactly what parsing in place gives, errors included. */
describe('ExtractionThread', () => {
  const thread = new ExtractionThread();
  afterAll(() => thread.close());

  it('parses on another thread, with the same document as in place', async () => {
    expect(isMainThread).toBe(true);
    for (const name of ['sample.pdf', 'sample.docx', 'sample.pptx', 'sample.eml']) {
      const file = fixture(name);
      const { document, threadId: parsedBy } = await thread.extractWithThread(file, name, { extractTables: true });
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
      ].map(([file, name]) => thread.extract(file as Buffer, name as string, { extractTables: false }).catch((e: unknown) => e)),
    );
    expect(kinds.map((e) => (e instanceof ExtractionError ? e.kind : String(e)))).toEqual(['unsupported', 'corrupt', 'empty']);
  }, 60_000);

  it('fails the parses a dying worker held with a clear error, and starts a new worker for the next file', async () => {
    const held = thread.extract(fixture('sample.pdf'), 'sample.pdf', { extractTables: false });
    await thread.close();
    await expect(held).rejects.toThrow(/The parser stopped while reading the file/);
    const { document } = await thread.extractWithThread(fixture('sample.md'), 'sample.md', { extractTables: false });
    expect(document.sections.length).toBeGreaterThan(0);
  }, 60_000);
});
