import fc from 'fast-check';
import { parseRtf } from './rtf';

/** Writes text as RTF does: ASCII letters as they are, the three specials escaped, everything else as \\uN? per UTF-16 unit (signed). */
const escape = (text: string) =>
  text
    .split('')
    .map((ch) => {
      if (/[A-Za-z0-9 .,]/.test(ch)) return ch;
      if ('\\{}'.includes(ch)) return `\\${ch}`;
      const code = ch.charCodeAt(0);
      return `\\u${code > 32767 ? code - 65536 : code}?`;
    })
    .join('');

const rtf = (body: string, header = '') => Buffer.from(`{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0\\fswiss Arial;}{\\f1\\fcharset204 Arial Cyr;}}${header}\n${body}}`, 'latin1');
const parse = (body: string, header = '', extractTables = true) => parseRtf(rtf(body, header), { extractTables });

describe('parseRtf', () => {
  it('decodes \\u with its \\uc fallbacks skipped, \\\'hh in the font\'s code page, and escaped symbols', async () => {
    const doc = await parse("caf\\'e9 \\uc2\\u8364\\'80\\'80 5 {\\f1 \\'c0\\'e1} \\{x\\} \\\\ a\\tab b\\line c\\emdash d\\~e\\par");
    expect(doc.sections).toEqual([{ text: 'café € 5 Аб {x} \\ a\tb\nc—d\u00a0e' }]);
  });

  it('skips destinations: \\* groups, pictures, headers and footers, footnotes and field instructions', async () => {
    const body =
      "{\\*\\company Acme}{\\header Page header\\par}{\\pict 89504e47}Text {\\footnote Note.}{\\field{\\*\\fldinst HYPERLINK \"http://x\"}{\\fldrslt shown}} end.{\\*\\bkmkstart b}\\par";
    expect((await parse(body)).sections).toEqual([{ text: 'Text shown end.' }]);
  });

  it('starts sections at paragraphs in heading styles: by style name, or by the style\'s outline level', async () => {
    const styles = '{\\stylesheet{\\s0 Normal;}{\\s1\\sbasedon0 heading 1;}{\\s2\\outlinelevel1 \\u220\\\'55berschrift 2;}{\\*\\cs10 Default Paragraph Font;}}';
    const body = '\\pard\\plain\\s1 Otters\\par\\pard\\s0 Lead.\\par\\pard\\plain\\s2 {Diet}\\par\\pard Fish.\\par\\pard\\outlinelevel0 Herons\\par';
    expect((await parse(body, styles)).sections).toEqual([
      { title: 'Otters', text: 'Lead.', sections: [{ title: 'Diet', text: 'Fish.' }] },
      { title: 'Herons', text: '' },
    ]);
  });

  it('reads \\trhdr rows as headers; without extraction the rows stay in the text', async () => {
    const row = (cells: string[], header = false) => `\\trowd${header ? '\\trhdr' : ''}\\cellx1000\\cellx2000 ${cells.map((c) => `\\pard\\intbl ${c}\\cell`).join('')}\\row`;
    const body = `Before\\par ${row(['Species', 'Count'], true)}${row(['Otter', '12'])}\\pard After\\par`;
    const doc = await parse(body);
    expect(doc.tables).toEqual([{ id: 'table_1', headers: [[{ text_value: 'Species' }, { text_value: 'Count' }]], rows: [[{ text_value: 'Otter' }, { int_value: 12 }]] }]);
    expect(doc.sections).toEqual([{ text: 'Before\n\nAfter' }]);
    expect((await parse(body, '', false)).sections).toEqual([{ text: 'Before\n\nSpecies | Count\nOtter | 12\n\nAfter' }]);
  });

  it('takes title, author and subject from \\info', async () => {
    const doc = await parse('x\\par', '{\\info{\\title Otter \\u233\\\'3f}{\\author Ann}{\\subject Rivers}{\\creatim\\yr2024}}');
    expect(doc.title).toBe('Otter é');
    expect(doc.metadata).toEqual({ author: 'Ann', subject: 'Rivers' });
  });

  it('throws corrupt for a file that is not RTF, or that ends inside a group', async () => {
    await expect(parseRtf(Buffer.from('{\\html1 nope}'), { extractTables: true })).rejects.toMatchObject({ kind: 'corrupt' });
    await expect(parseRtf(Buffer.from('{\\rtf1 {\\b unfinished'), { extractTables: true })).rejects.toMatchObject({ kind: 'corrupt' });
  });

  it('reads back any text written with \\u escapes, astral characters included', async () => {
    const text = fc.string({ unit: 'grapheme', minLength: 1 }).filter((t) => !/\s/.test(t));
    await fc.assert(
      fc.asyncProperty(text, async (t) => {
        const doc = await parse(`${escape(t)}\\par`);
        expect(doc.sections).toEqual([{ text: t }]);
      }),
    );
  });
});
