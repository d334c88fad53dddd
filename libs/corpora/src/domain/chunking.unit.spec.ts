import { chunkText, MAX_SENTENCE_CHARS, sentences } from './chunking';
import { documentContent, MAX_DOCUMENT_PARTS, StructuredDocumentInput } from './document';

/** The sentences as the segmenter finds them over the whole text at once: what chunking returned before issue 22. */
const wholeTextSentences = (text: string): string[] =>
  [...new Intl.Segmenter('en', { granularity: 'sentence' }).segment(text)].map((s) => s.segment.trim()).filter((s) => s !== '');

const PROSE = [
  'Mr. Smith measured 3.5 kg of kelp at 9 a.m. on the pier.',
  'He said "The otters are back!" and left.',
  'Was it the U.S. team, e.g. the one from Monterey?',
  'The survey (see Fig. 2.) was repeated; results differ.',
  'Urchins, i.e. purple ones, were counted... then released.',
  'Heron numbers fell by 12.5% in 2021!',
  '«Les loutres» reviennent. Ça va?',
  'A list: one, two, three.',
];

/** Multi-paragraph prose long enough to need several segmenter windows, with abbreviations and quotes at window edges. */
function ordinaryText(paragraphs: number): string {
  const out: string[] = [];
  for (let p = 0; p < paragraphs; p++) {
    const sentencesInParagraph = 3 + (p % 40);
    out.push(Array.from({ length: sentencesInParagraph }, (_, i) => PROSE[(p * 7 + i) % PROSE.length]).join(p % 3 === 0 ? '  ' : ' '));
  }
  return out.join(paragraphs % 2 ? '\n\n' : '\r\n\r\n');
}

const structured = (text: string): StructuredDocumentInput => ({ type: 'structured', id: 'd', metadata: {}, sections: [{ text }] });

describe('sentence chunking (issue 22: linear in the text)', () => {
  it('finds the same sentences as a whole-text segmentation on ordinary multi-paragraph text', () => {
    for (const paragraphs of [1, 2, 7, 60, 200]) {
      const text = ordinaryText(paragraphs);
      expect(sentences(text)).toEqual(wholeTextSentences(text));
    }
  });

  it('keeps a sentence longer than the segmenter window whole, and the ones around it', () => {
    const long = `Kelp ${'kelp '.repeat(5000)}ends here.`;
    const text = `Before it. ${long} After it.`;
    expect(sentences(text)).toEqual(['Before it.', long, 'After it.']);
    expect(sentences(text)).toEqual(wholeTextSentences(text));
  });

  it('cuts a run with no sentence break at its last space before the longest sentence, and keeps every word', () => {
    const run = `Kelp ${'kelp '.repeat(60_000)}ends here`; // ~300,000 characters, no full stop
    const text = `Before it. ${run}. After it.`;
    const found = sentences(text);
    expect(found[0]).toBe('Before it.');
    expect(found[found.length - 1]).toBe('After it.');
    const cuts = found.slice(1, -1);
    expect(cuts.length).toBeGreaterThanOrEqual(4);
    for (const cut of cuts) expect(cut.length).toBeLessThanOrEqual(MAX_SENTENCE_CHARS);
    expect(cuts.join(' ')).toBe(`${run}.`);
  });

  it('cuts a run with no break and no space at the longest sentence', () => {
    const run = 'x'.repeat(MAX_SENTENCE_CHARS * 2 + 10);
    expect(sentences(run).map((s) => s.length)).toEqual([MAX_SENTENCE_CHARS, MAX_SENTENCE_CHARS, 10]);
  });

  it('splits 50,000 sentences of one paragraph into 50,000 parts, in order', () => {
    const text = Array.from({ length: 50_000 }, (_, i) => `Otter ${i} dives.`).join(' ');
    const parts = chunkText(text, { type: 'sentence_chunking_strategy' });
    expect(parts).toHaveLength(50_000);
    expect(parts[0]).toBe('Otter 0 dives.');
    expect(parts[31_337]).toBe('Otter 31337 dives.');
    expect(parts[49_999]).toBe('Otter 49999 dives.');
  });

  it('splits 50,000 one-word paragraphs into 50,000 parts', () => {
    const parts = chunkText(Array.from({ length: 50_000 }, () => 'Otter.').join('\n\n'), { type: 'sentence_chunking_strategy' });
    expect(parts).toHaveLength(50_000);
  });

  it('refuses a document of more parts than the bound with a typed invalid error naming the field', () => {
    const text = Array.from({ length: MAX_DOCUMENT_PARTS + 1 }, (_, i) => `S${i}.`).join(' ');
    expect(() => documentContent(structured(text))).toThrow(expect.objectContaining({ kind: 'invalid', code: 'document.too_many_parts', details: { fieldErrors: { sections: expect.any(String) } } }));
  });

  it('accepts a document of exactly the bound', () => {
    const text = Array.from({ length: MAX_DOCUMENT_PARTS }, (_, i) => `S${i}.`).join(' ');
    expect(documentContent(structured(text)).stats.parts).toBe(MAX_DOCUMENT_PARTS);
  });
});
