import fc from 'fast-check';
import { parsePpt } from './ppt';
import { fixture } from '../../../../test/support/extraction-fixtures';

// Reads the committed fixtures made by test/fixtures/make-office-fixtures.sh (hence .int: real files).

describe('parsePpt', () => {
  it('makes each slide a section titled by its title placeholder, in presentation order', async () => {
    const doc = await parsePpt(fixture('sample.ppt'), { extractTables: true });
    expect(doc.sections.map((s) => s.title)).toEqual(['Field Survey of River Wildlife', 'Introduction', 'Results']);
    expect(doc.sections[0].text).toBe('A spring count of river animals');
    expect(doc.sections[1].text).toBe('This survey counts the animals living along the river.\n\nVolunteers walked the banks every morning for two weeks.');
    expect(doc.sections[2].text).toContain('The pelgrave sentence comes from the ppt fixture.\n\nOtters were the most common animal seen.');
    expect(doc.metadata).toEqual({ slide_count: 3 });
  });

  it('keeps the text of a slide table (shapes in PowerPoint 97) in its slide', async () => {
    const doc = await parsePpt(fixture('sample.ppt'), { extractTables: true });
    expect(doc.tables).toEqual([]);
    expect(doc.sections[2].text.split('\n\n')).toEqual(expect.arrayContaining(['Species', 'Otter', '12', '4.5', 'Heron', '7', '2.25']));
  });

  it('throws corrupt for a truncated file, random bytes, and a compound file that is not a deck', async () => {
    const random = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 251));
    for (const file of [fixture('corrupt.ppt'), random, fixture('sample.doc')]) {
      await expect(parsePpt(file, { extractTables: true })).rejects.toMatchObject({ name: 'ExtractionError', kind: 'corrupt' });
    }
  });

  it('either reads a deck cut anywhere or throws corrupt, never anything else', async () => {
    const deck = fixture('sample.ppt');
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: deck.length - 1 }), async (length) => {
        const outcome = await parsePpt(deck.subarray(0, length), { extractTables: true }).catch((e: unknown) => e);
        if (outcome instanceof Error) expect(outcome).toMatchObject({ name: 'ExtractionError', kind: 'corrupt' });
        else expect(outcome).toHaveProperty('sections');
      }),
      { numRuns: 200 },
    );
  });
});
