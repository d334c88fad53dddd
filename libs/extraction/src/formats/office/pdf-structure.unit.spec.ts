import { sectionsFromBlocks } from '../shared/sections';
import { PdfRun } from './pdf-reader';
import { pdfBlocks } from './pdf-structure';

const BODY = 0.75;
const run = (x: number, y: number, text: string, size = BODY): PdfRun => ({ x, y, text, size, width: text.length * 0.5 * size });
/** Lines of text at the left margin, one unit apart from `y` on. */
const lines = (y: number, texts: string[], size = BODY) => texts.map((text, i) => run(3, y + i * 0.9 * (size / BODY), text, size));

describe('pdf structure', () => {
  it('ranks heading sizes into nested levels and joins a heading that wraps', () => {
    const page = [
      ...lines(1, ['A title that is long enough', 'to wrap onto two lines'], 1.5),
      ...lines(4, ['Body text under the title, long enough to set the body size of the page.']),
      ...lines(6, ['A smaller heading'], 1.1),
      ...lines(7.5, ['First line of a paragraph that runs', 'onto a second line.']),
      ...lines(10, ['Another paragraph after a gap.']),
    ];
    const { blocks } = pdfBlocks([page], false);
    expect(sectionsFromBlocks(blocks)).toEqual([
      {
        title: 'A title that is long enough to wrap onto two lines',
        text: 'Body text under the title, long enough to set the body size of the page.',
        sections: [{ title: 'A smaller heading', text: 'First line of a paragraph that runs onto a second line.\n\nAnother paragraph after a gap.' }],
      },
    ]);
  });

  it('ends a paragraph at the end of a page', () => {
    const { blocks } = pdfBlocks([lines(50, ['The last line of one page']), lines(2, ['the first line of the next.'])], false);
    expect(blocks.map((b) => b.text)).toEqual(['The last line of one page', 'the first line of the next.']);
  });

  it('takes a grid out of the text as a table when asked, and leaves it in otherwise', () => {
    const page = [
      ...lines(1, ['Text before the table, in the body size of the page.']),
      run(3, 3, 'Year'), run(12, 3, 'Visitors'),
      run(3, 4, '2023'), run(12, 4, '1200'),
      run(3, 5, '2024'), run(12, 5, '1350.5'),
      ...lines(7, ['Text after it.']),
    ];
    const extracted = pdfBlocks([page], true);
    expect(extracted.tables).toEqual([
      {
        id: 'table_1',
        headers: [[{ text_value: 'Year' }, { text_value: 'Visitors' }]],
        rows: [
          [{ int_value: 2023 }, { int_value: 1200 }],
          [{ int_value: 2024 }, { float_value: 1350.5 }],
        ],
      },
    ]);
    expect(extracted.blocks.map((b) => b.text)).toEqual(['Text before the table, in the body size of the page.', 'Text after it.']);
    const inline = pdfBlocks([page], false);
    expect(inline.tables).toEqual([]);
    expect(inline.blocks.map((b) => b.text)).toEqual(['Text before the table, in the body size of the page.', 'Year | Visitors\n2023 | 1200\n2024 | 1350.5', 'Text after it.']);
  });

  it('yields nothing for pages without text', () => {
    expect(pdfBlocks([[], []], true)).toEqual({ blocks: [], tables: [] });
  });
});
