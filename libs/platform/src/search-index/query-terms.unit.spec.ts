import { queryTerms } from './query-terms';

describe('queryTerms', () => {
  it('keeps content words once, lower-cased, without engine syntax or stop words', () => {
    expect(queryTerms('What causes the TIDES, and -what "causes" them*?')).toEqual(['what', 'causes', 'tides', 'them']);
    expect(queryTerms('Ärzte über Émile')).toEqual(['ärzte', 'über', 'émile']);
  });

  it('keeps stop words when nothing else is left, and gives nothing for punctuation', () => {
    expect(queryTerms('to be or not to be')).toEqual(['to', 'be', 'or', 'not']);
    expect(queryTerms('?!')).toEqual([]);
  });
});
