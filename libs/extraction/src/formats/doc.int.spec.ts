import { parseDoc } from './doc';
import { fixture } from '../../../../test/support/extraction-fixtures';

// Reads the committed fixtures made by test/fixtures/make-office-fixtures.sh (hence .int: real files).

describe('parseDoc', () => {
  // word-extractor gives the text of a Word 97 file but not its paragraph styles, so headings cannot be told
  // from body text: the body is one untitled section, "Introduction" and "Results" are paragraphs of it.
  it('reads the body as one untitled section of paragraphs, the marker sentence among them', async () => {
    const doc = await parseDoc(fixture('sample.doc'), { extractTables: true });
    expect(doc.sections).toHaveLength(1);
    expect(doc.sections[0].title).toBeUndefined();
    const paragraphs = doc.sections[0].text.split('\n\n');
    expect(paragraphs.slice(0, 4)).toEqual([
      'Introduction',
      'This survey counts the animals living along the river. It was carried out over two weeks in spring.',
      'Volunteers walked the banks every morning.',
      'Results',
    ]);
    expect(paragraphs[4]).toContain('The dorvantis sentence comes from the doc fixture.');
  });

  it('keeps table rows as text, one paragraph per row', async () => {
    const doc = await parseDoc(fixture('sample.doc'), { extractTables: true });
    expect(doc.tables).toEqual([]);
    expect(doc.sections[0].text.split('\n\n')).toEqual(expect.arrayContaining(['Species Count Weight', 'Otter 12 4.5', 'Heron 7 2.25']));
  });

  it('throws corrupt for a truncated file and random bytes', async () => {
    const random = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 251));
    for (const file of [fixture('corrupt.doc'), random]) {
      await expect(parseDoc(file, { extractTables: true })).rejects.toMatchObject({ name: 'ExtractionError', kind: 'corrupt' });
    }
  });
});
