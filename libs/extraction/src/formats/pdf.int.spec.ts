import fc from 'fast-check';
import { extract } from '../extract';
import { ExtractionError } from '../extracted';
import { readPdf } from './office/pdf-reader';
import { parsePdf } from './pdf';
import { FIXTURE_TABLE, fixture, section } from '../../../../test/support/extraction-fixtures';

// Reads the committed fixtures made by test/fixtures/make-office-fixtures.sh (hence .int: real files).
const SENTENCE = 'The pendrake sentence comes from the pdf fixture.';

describe('parsePdf', () => {
  it('reads headings as sections, the marker sentence under Results, and the info dictionary', async () => {
    const doc = await parsePdf(fixture('sample.pdf'), { extractTables: true });
    expect(doc.sections.map((s) => s.title)).toEqual(['Introduction', 'Results']);
    expect(section(doc.sections, 'Results')?.text).toContain(SENTENCE);
    expect(section(doc.sections, 'Introduction')?.text).toBe(
      'This survey counts the animals living along the river. It was carried out over two weeks in spring.\n\nVolunteers walked the banks every morning.',
    );
    expect(doc.title).toBe('Field Survey of River Wildlife');
    expect(doc.metadata).toEqual({ author: 'Ada Fieldworker', page_count: 1 });
  });

  it('extracts the table with its header row and typed cells, and leaves its text out of the section', async () => {
    const doc = await parsePdf(fixture('sample.pdf'), { extractTables: true });
    expect(doc.tables).toEqual([FIXTURE_TABLE]);
    expect(section(doc.sections, 'Results')?.text).toBe(`${SENTENCE} Otters were the most common animal seen.\n\nHerons were seen mostly at dawn.`);
  });

  it('keeps the table as text when tables are not extracted', async () => {
    const doc = await parsePdf(fixture('sample.pdf'), { extractTables: false });
    expect(doc.tables).toEqual([]);
    expect(section(doc.sections, 'Results')?.text).toBe(
      `${SENTENCE} Otters were the most common animal seen.\n\nSpecies | Count | Weight\nOtter | 12 | 4.5\nHeron | 7 | 2.25\n\nHerons were seen mostly at dawn.`,
    );
  });

  it('returns no sections for a PDF without a text layer, which the dispatcher reports as empty', async () => {
    const doc = await parsePdf(fixture('no-text-layer.pdf'), { extractTables: true });
    expect(doc.sections).toEqual([]);
    expect(doc.tables).toEqual([]);
    await expect(extract(fixture('no-text-layer.pdf'), 'scan.pdf', { extractTables: true })).rejects.toMatchObject({ kind: 'empty' });
  });

  it('reads a PDF held in a slice of a larger buffer (pdf2json alone would read the wrong bytes)', async () => {
    const pdf = fixture('sample.pdf');
    const slice = Buffer.concat([Buffer.from('unrelated leading bytes'), pdf]).subarray(23);
    const doc = await parsePdf(slice, { extractTables: true });
    expect(section(doc.sections, 'Results')?.text).toContain(SENTENCE);
  });

});

describe('parsePdf on broken input', () => {
  // pdf2json prints each parse error's stack, with console.log (its pdf.js) and with console.error of the
  // node:console module (not the global console jest captures). Muted so the report stays readable; the
  // assertions are on what is thrown.
  const nodeConsole = require('node:console') as Console;
  beforeEach(() => {
    jest.spyOn(nodeConsole, 'error').mockImplementation(() => undefined);
    jest.spyOn(console, 'log').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  it('throws corrupt for a truncated file, random bytes and an empty file', async () => {
    const random = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7919 + 13) % 251));
    for (const file of [fixture('corrupt.pdf'), random, Buffer.alloc(0)]) {
      await expect(parsePdf(file, { extractTables: true })).rejects.toMatchObject({ name: 'ExtractionError', kind: 'corrupt' });
    }
  });

  it('gives up with corrupt instead of waiting for a parse that does not finish in time', async () => {
    await expect(readPdf(fixture('sample.pdf'), 1)).rejects.toThrow(new ExtractionError('corrupt', 'The pdf file could not be read: parsing took longer than 1 ms'));
  });

  it('either reads a PDF cut anywhere or throws corrupt, never anything else', async () => {
    const pdf = fixture('sample.pdf');
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: pdf.length - 1 }), async (length) => {
        const outcome = await parsePdf(pdf.subarray(0, length), { extractTables: true }).catch((e: unknown) => e);
        if (outcome instanceof Error) expect(outcome).toMatchObject({ name: 'ExtractionError', kind: 'corrupt' });
        else expect(outcome).toHaveProperty('sections');
      }),
      { numRuns: 15 },
    );
  });
});
