import { isDomainError, runInSlices, turnsDuring } from '@lib/platform';
import { documentContent, documentContentSteps, MAX_DOCUMENT_CHARACTERS, StructuredDocumentInput } from './document';

const oneLineSections = (count: number): StructuredDocumentInput => ({
  type: 'structured',
  id: 'paragraphs',
  metadata: {},
  sections: Array.from({ length: count }, (_, i) => ({ title: i % 100 === 0 ? `Part ${i}` : undefined, text: `Paragraph ${i} of the report.` })),
});

describe('a document chunked in steps', () => {
  it('gives the loop turns while 50,000 one-line sections are chunked, with the parts documentContent gives', async () => {
    const input = oneLineSections(50_000);
    const { value, turns } = await turnsDuring(() => runInSlices(documentContentSteps(input)));
    expect(turns).toBeGreaterThanOrEqual(3);
    expect(value).toEqual(documentContent(input));
    expect(value.parts[49_999]).toEqual({ text: 'Paragraph 49999 of the report.', metadata: {}, sectionTitle: undefined });
  });

  it('gives turns within one line of 3 MB with no sentence break, and refuses text past the bound before chunking it all', async () => {
    const line = (chars: number): StructuredDocumentInput => ({ type: 'structured', id: 'run', metadata: {}, sections: [{ text: 'otter '.repeat(chars / 6) }] });
    const { value, turns } = await turnsDuring(() => runInSlices(documentContentSteps(line(3_000_000))));
    expect(value.stats.characters).toBeGreaterThan(2_900_000);
    expect(turns).toBeGreaterThanOrEqual(3);
    // 30 MB of text in ~460 parts of 64 K: refused once the parts pass 10 M characters, a third of the way.
    const steps = documentContentSteps(line(3 * MAX_DOCUMENT_CHARACTERS));
    let read = 0;
    const failure = (() => {
      try {
        while (!steps.next().done) read++;
      } catch (e) {
        return e;
      }
    })();
    expect(isDomainError(failure) && failure.code).toBe('document.too_large');
    expect(read).toBeLessThan(MAX_DOCUMENT_CHARACTERS / 60_000);
  });

  it('refuses the part past the bound in steps as at once: a 400 with the field error', async () => {
    const input = oneLineSections(50_001);
    const failure = await runInSlices(documentContentSteps(input)).catch((e: unknown) => e);
    expect(isDomainError(failure) && failure.details).toEqual(expect.objectContaining({ fieldErrors: { sections: 'more than 50000 parts' } }));
    expect(() => documentContent(input)).toThrow(/more than 50000 parts/);
  });
});
