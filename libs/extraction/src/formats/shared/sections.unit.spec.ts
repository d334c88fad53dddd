import fc from 'fast-check';
import { ExtractedSection } from '../../extracted';
import { Block, heading, paragraph, sectionsFromBlocks } from './sections';

const flatten = (sections: readonly ExtractedSection[]): string[] =>
  sections.flatMap((s) => [...(s.title ? [`# ${s.title}`] : []), ...(s.text ? s.text.split('\n\n') : []), ...flatten(s.sections ?? [])]);

describe('sectionsFromBlocks', () => {
  it('puts text before the first heading in an untitled first section', () => {
    expect(sectionsFromBlocks([paragraph('lead'), paragraph('more'), heading(1, 'A'), paragraph('a')])).toEqual([
      { text: 'lead\n\nmore' },
      { title: 'A', text: 'a' },
    ]);
  });

  it('nests by level, a skipped level still nests, and a shallower heading closes deeper ones', () => {
    const blocks = [heading(1, 'A'), heading(3, 'A.x'), paragraph('deep'), heading(2, 'A.1'), heading(1, 'B'), paragraph('b')];
    expect(sectionsFromBlocks(blocks)).toEqual([
      { title: 'A', text: '', sections: [{ title: 'A.x', text: 'deep' }, { title: 'A.1', text: '' }] },
      { title: 'B', text: 'b' },
    ]);
  });

  it('starts at whatever level the document starts with', () => {
    expect(sectionsFromBlocks([heading(2, 'Two'), heading(4, 'Four'), heading(2, 'Two again')])).toEqual([
      { title: 'Two', text: '', sections: [{ title: 'Four', text: '' }] },
      { title: 'Two again', text: '' },
    ]);
  });

  it('keeps a paragraph\'s indentation but trims headings', () => {
    expect(sectionsFromBlocks([heading(1, ' A '), paragraph('\n  indented\n    more\n\n')])).toEqual([{ title: 'A', text: '  indented\n    more' }]);
  });

  it('drops empty headings and paragraphs', () => {
    expect(sectionsFromBlocks([heading(1, '  '), paragraph(''), paragraph(' \n'), paragraph('x')])).toEqual([{ text: 'x' }]);
    expect(sectionsFromBlocks([])).toEqual([]);
  });

  it('keeps every heading and paragraph, in reading order, whatever the levels', () => {
    const word = fc.stringMatching(/^[a-z]{1,8}$/);
    const block = fc.oneof(fc.tuple(fc.integer({ min: 1, max: 6 }), word).map(([level, text]) => heading(level, text)), word.map(paragraph));
    fc.assert(
      fc.property(fc.array(block), (blocks: Block[]) => {
        expect(flatten(sectionsFromBlocks(blocks))).toEqual(blocks.map((b) => (b.kind === 'heading' ? `# ${b.text}` : b.text)));
      }),
    );
  });
});
