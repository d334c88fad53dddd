import JSZip from 'jszip';
import { parseDocx } from './docx';
import { FIXTURE_TABLE, fixture, section } from '../../../../test/support/extraction-fixtures';

// Reads the committed fixtures made by test/fixtures/make-office-fixtures.sh (hence .int: real files).
const SENTENCE = 'The daxomere sentence comes from the docx fixture.';

describe('parseDocx', () => {
  it('reads Word headings as sections with the marker sentence under Results, and the core properties', async () => {
    const doc = await parseDocx(fixture('sample.docx'), { extractTables: true });
    expect(doc.sections.map((s) => s.title)).toEqual(['Introduction', 'Results']);
    expect(section(doc.sections, 'Results')?.text).toContain(SENTENCE);
    expect(section(doc.sections, 'Introduction')?.text).not.toContain('daxomere');
    expect(doc.title).toBe('Field Survey of River Wildlife');
    expect(doc.metadata).toMatchObject({ author: 'Ada Fieldworker' });
  });

  it('extracts the table through mammoth with its header row and typed cells, not repeated in the text', async () => {
    const doc = await parseDocx(fixture('sample.docx'), { extractTables: true });
    expect(doc.tables).toEqual([FIXTURE_TABLE]);
    expect(section(doc.sections, 'Results')?.text).toBe(`${SENTENCE} Otters were the most common animal seen.\n\nHerons were seen mostly at dawn.`);
  });

  it('keeps the table as text when tables are not extracted', async () => {
    const doc = await parseDocx(fixture('sample.docx'), { extractTables: false });
    expect(doc.tables).toEqual([]);
    expect(section(doc.sections, 'Results')?.text).toContain('Otter | 12 | 4.5\nHeron | 7 | 2.25');
  });

  it('takes the title from the core properties only when they have one', async () => {
    const zip = await JSZip.loadAsync(fixture('sample.docx'));
    zip.remove('docProps/core.xml');
    const doc = await parseDocx(await zip.generateAsync({ type: 'nodebuffer' }), { extractTables: true });
    expect(doc.title).toBeUndefined();
    expect(doc.metadata).not.toHaveProperty('author');
    expect(section(doc.sections, 'Results')?.text).toContain(SENTENCE);
  });

  it('throws corrupt for a truncated file, random bytes, and a zip that is not a Word document', async () => {
    const random = Buffer.from(Array.from({ length: 2000 }, (_, i) => (i * 7919 + 13) % 251));
    for (const file of [fixture('corrupt.docx'), random, fixture('sample.pptx')]) {
      await expect(parseDocx(file, { extractTables: true })).rejects.toMatchObject({ name: 'ExtractionError', kind: 'corrupt' });
    }
  });
});
