import { bodySize, linesOf, paragraphBreak, tableRanges } from './pdf-layout';
import { PdfRun } from './pdf-reader';

/** A run as pdf2json would place it: 12 pt text is 0.75 page units, a glyph about half of that wide. */
const run = (x: number, y: number, text: string, size = 0.75): PdfRun => ({ x, y, text, size, width: text.length * 0.5 * size });

describe('pdf layout', () => {
  it('joins runs on one baseline into a line, with a space only where the gap shows one', () => {
    const [line] = linesOf([run(10, 5, 'bold'), run(3, 5.02, 'A '), run(4, 5, 'word'), run(5.75, 5, 'ed'), run(7, 5, 'end')]);
    // "A " already ends in a space; "word" ends at 5.5 and "ed" starts 0.25 later (a word gap); "ed" → "end" is
    // 0.5 units, under two glyph widths (0.75): still one cell. "end" → "bold" is 1.9 units: a new cell.
    expect(line.cells.map((c) => c.text)).toEqual(['A word ed end', 'bold']);
  });

  it('orders lines top to bottom and keeps a superscript on its line', () => {
    const lines = linesOf([run(3, 9, 'second'), run(3, 5, 'first'), run(6, 4.85, '2', 0.5)]);
    expect(lines.map((l) => l.text)).toEqual(['first 2', 'second']);
  });

  it('finds a grid of aligned cells even when headers are centred and numbers right-aligned', () => {
    const lines = linesOf([
      run(3, 1, 'Some running text before the table.'),
      run(5, 3, 'Species'), run(15, 3, 'Count'), run(25, 3, 'Weight'),
      run(3, 4, 'Otter'), run(17, 4, '12'), run(27, 4, '4.5'),
      run(3, 5, 'Heron'), run(17.5, 5, '7'), run(26.6, 5, '2.25'),
      run(3, 7, 'Text after it.'),
    ]);
    expect(tableRanges(lines)).toEqual([[1, 4]]);
    expect(lines[2].cells.map((c) => c.text)).toEqual(['Otter', '12', '4.5']);
  });

  it('does not take lines whose columns cross, or a single split line, for a table', () => {
    const crossing = linesOf([run(3, 3, 'Name'), run(12, 3, 'Value'), run(3, 4, 'A much longer first cell'), run(20, 4, 'x')]);
    expect(crossing[1].cells).toHaveLength(2);
    expect(tableRanges(crossing)).toEqual([]);
    expect(tableRanges(linesOf([run(3, 3, 'Page 4'), run(30, 3, 'Annual report')]))).toEqual([]);
  });

  it('does not take two columns of prose for a table', () => {
    const left = ['The survey began in the spring of the year', 'when the river was still high and the banks', 'were too soft to walk along in the mornings.'];
    const right = ['Counts were made at dawn and at dusk, when', 'the animals are most active and the light is', 'low enough that the water does not glare.'];
    const lines = linesOf(left.flatMap((text, i) => [run(3, 3 + i, text, 0.5), run(15, 3 + i, right[i], 0.5)]));
    expect(lines.every((line) => line.cells.length === 2)).toBe(true);
    expect(tableRanges(lines)).toEqual([]);
  });

  it('does not join grids far apart on the page into one table', () => {
    const lines = linesOf([run(3, 3, 'a'), run(20, 3, 'b'), run(3, 20, 'c'), run(20, 20, 'd')]);
    expect(tableRanges(lines)).toEqual([]);
  });

  it('breaks paragraphs at gaps clearly wider than the usual line advance', () => {
    const lines = linesOf([run(3, 1, 'one'), run(3, 1.9, 'two'), run(3, 2.8, 'three'), run(3, 4.5, 'four'), run(3, 5.4, 'five')]);
    const breakBeyond = paragraphBreak([lines]);
    expect(2.8 - 1.9).toBeLessThan(breakBeyond(0.75));
    expect(4.5 - 2.8).toBeGreaterThan(breakBeyond(0.75));
  });

  it('still breaks one-line paragraphs, whose gaps are the most common step', () => {
    const lines = linesOf([run(3, 1, 'one'), run(3, 2.5, 'two'), run(3, 4, 'three')]);
    expect(1.5).toBeGreaterThan(paragraphBreak([lines])(0.75));
  });

  it('takes the size most characters are set in as the body size', () => {
    const lines = linesOf([run(3, 1, 'Heading', 1.5), run(3, 3, 'a long line of body text'), run(3, 4, 'another line of body text')]);
    expect(bodySize([lines])).toBe(0.75);
  });
});
