import { parseHhemScores, parseJudgeScore } from './scores';

describe('score parsing', () => {
  it('reads HHEM-compatible answers in their common shapes', () => {
    expect(parseHhemScores({ scores: [0.3] })).toEqual([0.3]);
    expect(parseHhemScores([0.7, 1.2])).toEqual([0.7, 1]);
    expect(parseHhemScores([[{ label: 'consistent', score: 0.8 }, { label: 'hallucinated', score: 0.2 }]])).toEqual([0.8]);
    expect(parseHhemScores([{ label: 'LABEL_0', score: 0.9 }])[0]).toBeCloseTo(0.1);
    expect(parseHhemScores({ nope: 1 })).toEqual([]);
  });

  it('reads a judge score from JSON, a bare number or a percentage, and refuses anything else', () => {
    expect(parseJudgeScore('{"score": 0.25}')).toBe(0.25);
    expect(parseJudgeScore('0.9')).toBe(0.9);
    expect(parseJudgeScore('Score: 1')).toBe(1);
    expect(parseJudgeScore('About 85% consistent')).toBe(0.85);
    expect(parseJudgeScore('Out of 10 I give it 0.4')).toBe(0.4);
    expect(parseJudgeScore('I cannot tell.')).toBeUndefined();
    expect(parseJudgeScore('7')).toBeUndefined();
  });
});
