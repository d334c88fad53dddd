import { withContext } from './context-window';

const parts = ['Otters float.', 'They hold hands while asleep.', 'Kelp anchors them.', 'Pups ride on bellies.'];

describe('context windows around a matched part', () => {
  it('adds whole sentences before and after, with tags around the match', () => {
    expect(withContext(parts, 2, { sentencesBefore: 1, sentencesAfter: 1, startTag: '<em>', endTag: '</em>' })).toBe(
      'They hold hands while asleep. <em>Kelp anchors them.</em> Pups ride on bellies.',
    );
    expect(withContext(parts, 0, { sentencesBefore: 3, sentencesAfter: 0 })).toBe('Otters float.');
  });

  it('prefers sentences over characters, and cuts character windows at word boundaries', () => {
    expect(withContext(parts, 1, { sentencesBefore: 1, charactersBefore: 3 })).toBe('Otters float. They hold hands while asleep.');
    expect(withContext(parts, 1, { charactersBefore: 7, charactersAfter: 9 })).toBe('float. They hold hands while asleep. Kelp');
  });

  it('returns the whole document for full_document_context, ignoring the counts', () => {
    expect(withContext(parts, 1, { fullDocument: true, sentencesBefore: 0, startTag: '[', endTag: ']' })).toBe(
      'Otters float. [They hold hands while asleep.] Kelp anchors them. Pups ride on bellies.',
    );
  });
});
