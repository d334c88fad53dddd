import JSZip from 'jszip';
import { parsePptx } from './pptx';
import { FIXTURE_HEADER, FIXTURE_ROWS, fixture, section } from '../../../../test/support/extraction-fixtures';

// Reads the committed fixtures made by test/fixtures/make-office-fixtures.sh (hence .int: real files).
const SENTENCE = 'The pexillion sentence comes from the pptx fixture.';

/** The fixture with some of its parts rewritten. */
async function editedDeck(edit: (part: string, xml: string) => string): Promise<Buffer> {
  const zip = await JSZip.loadAsync(fixture('sample.pptx'));
  for (const path of ['ppt/presentation.xml', 'ppt/slides/slide3.xml']) zip.file(path, edit(path, await zip.file(path)!.async('string')));
  return zip.generateAsync({ type: 'nodebuffer' });
}

describe('parsePptx', () => {
  it('makes each slide a section titled by its title placeholder, in presentation order', async () => {
    const doc = await parsePptx(fixture('sample.pptx'), { extractTables: true });
    expect(doc.sections).toEqual([
      { title: 'Field Survey of River Wildlife', text: 'A spring count of river animals' },
      { title: 'Introduction', text: 'This survey counts the animals living along the river.\n\nVolunteers walked the banks every morning for two weeks.' },
      { title: 'Results', text: `${SENTENCE}\n\nOtters were the most common animal seen.` },
    ]);
    expect(doc.title).toBe('Field Survey of River Wildlife');
    expect(doc.metadata).toEqual({ author: 'Ada Fieldworker', slide_count: 3 });
  });

  it('extracts the slide table with typed cells; without a header-row flag all rows are data', async () => {
    const doc = await parsePptx(fixture('sample.pptx'), { extractTables: true });
    expect(doc.tables).toEqual([
      {
        id: 'table_1',
        headers: [],
        rows: [FIXTURE_HEADER, ...FIXTURE_ROWS],
      },
    ]);
  });

  it('takes the first row as the header row when the table marks it (firstRow="1")', async () => {
    const deck = await editedDeck((path, xml) => (path.endsWith('slide3.xml') ? xml.replace('<a:tblPr>', '<a:tblPr firstRow="1">') : xml));
    const [table] = (await parsePptx(deck, { extractTables: true })).tables;
    expect(table.headers).toEqual([[{ text_value: 'Species' }, { text_value: 'Count' }, { text_value: 'Weight' }]]);
    expect(table.rows).toHaveLength(2);
  });

  it('keeps the table as text of its slide when tables are not extracted', async () => {
    const doc = await parsePptx(fixture('sample.pptx'), { extractTables: false });
    expect(doc.tables).toEqual([]);
    expect(section(doc.sections, 'Results')?.text).toBe(`${SENTENCE}\n\nOtters were the most common animal seen.\n\nSpecies | Count | Weight\nOtter | 12 | 4.5\nHeron | 7 | 2.25`);
  });

  it('follows the slide list of presentation.xml, not the part names', async () => {
    const reversed = await editedDeck((path, xml) =>
      path === 'ppt/presentation.xml' ? xml.replace(/<p:sldIdLst>(.*)<\/p:sldIdLst>/, (_, ids: string) => `<p:sldIdLst>${ids.match(/<p:sldId [^>]*\/>/g)!.reverse().join('')}</p:sldIdLst>`) : xml,
    );
    const doc = await parsePptx(reversed, { extractTables: true });
    expect(doc.sections.map((s) => s.title)).toEqual(['Results', 'Introduction', 'Field Survey of River Wildlife']);
  });

  it('throws corrupt for a truncated file, random bytes, and a zip that is not a deck', async () => {
    const random = Buffer.from(Array.from({ length: 2000 }, (_, i) => (i * 7919 + 13) % 251));
    for (const file of [fixture('corrupt.pptx'), random, fixture('sample.docx')]) {
      await expect(parsePptx(file, { extractTables: true })).rejects.toMatchObject({ name: 'ExtractionError', kind: 'corrupt' });
    }
  });
});
