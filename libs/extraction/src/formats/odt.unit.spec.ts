import JSZip from 'jszip';
import { ExtractionError } from '../extracted';
import { parseOdt } from './odt';

const NS = [
  'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"',
  'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"',
  'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"',
  'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"',
  'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"',
].join(' ');

const content = (body: string, automaticStyles = '') =>
  `<?xml version="1.0" encoding="UTF-8"?><office:document-content ${NS}><office:automatic-styles>${automaticStyles}</office:automatic-styles><office:body><office:text>${body}</office:text></office:body></office:document-content>`;

async function odt(files: Record<string, string>): Promise<Buffer> {
  const zip = new JSZip();
  zip.file('mimetype', 'application/vnd.oasis.opendocument.text');
  for (const [name, text] of Object.entries(files)) zip.file(name, text);
  return zip.generateAsync({ type: 'nodebuffer' });
}

const parse = async (files: Record<string, string>, extractTables = true) => parseOdt(await odt(files), { extractTables });

describe('parseOdt', () => {
  it('spells out text:s, text:tab and text:line-break, and collapses source white space', async () => {
    const doc = await parse({ 'content.xml': content('<text:p>a<text:s text:c="3"/>b<text:tab/>c<text:line-break/>d\n   e</text:p>') });
    expect(doc.sections).toEqual([{ text: 'a   b\tc\nd e' }]);
  });

  it('reads a footnote and a text box as paragraphs after theirs, and leaves out tracked deletions, comments and the TOC', async () => {
    const body = [
      '<text:tracked-changes><text:changed-region><text:deletion><text:p>deleted</text:p></text:deletion></text:changed-region></text:tracked-changes>',
      '<text:table-of-content><text:index-body><text:p>Results ..... 1</text:p></text:index-body></text:table-of-content>',
      '<text:p>Otters<text:note><text:note-citation>1</text:note-citation><text:note-body><text:p>A footnote.</text:p></text:note-body></text:note> swim.',
      '<office:annotation><text:p>a comment</text:p></office:annotation></text:p>',
      '<text:p><draw:frame><draw:text-box><text:p>Boxed.</text:p></draw:text-box></draw:frame>After the box.</text:p>',
    ].join('');
    const doc = await parse({ 'content.xml': content(body) });
    expect(doc.sections).toEqual([{ text: 'Otters swim.\n\nA footnote.\n\nAfter the box.\n\nBoxed.' }]);
  });

  it('takes heading levels from text:h, and from paragraph styles that inherit an outline level', async () => {
    const styles = `<office:document-styles ${NS}><office:styles>
      <style:style style:name="Chapter" style:family="paragraph" style:default-outline-level="1"/>
      <style:style style:name="Heading_20_2" style:display-name="Heading 2" style:family="paragraph"/>
      <style:style style:name="Loop" style:family="paragraph" style:parent-style-name="Loop"/></office:styles></office:document-styles>`;
    const automatic = '<style:style style:name="P1" style:family="paragraph" style:parent-style-name="Chapter"/>';
    const body = '<text:p text:style-name="P1">One</text:p><text:p text:style-name="Heading_20_2">One.a</text:p><text:p text:style-name="Loop">body</text:p><text:list><text:list-item><text:h text:outline-level="1">Two</text:h></text:list-item></text:list>';
    const doc = await parse({ 'content.xml': content(body, automatic), 'styles.xml': styles });
    expect(doc.sections).toEqual([{ title: 'One', text: '', sections: [{ title: 'One.a', text: 'body' }] }, { title: 'Two', text: '' }]);
  });

  it('reads column spans and skips covered cells; a table without header rows has none', async () => {
    const table =
      '<table:table><table:table-row><table:table-cell table:number-columns-spanned="2"><text:p>Otter</text:p><text:p>river</text:p></table:table-cell><table:covered-table-cell/></table:table-row>' +
      '<table:table-rows><table:table-row><table:table-cell><text:p>12</text:p></table:table-cell><table:table-cell><text:p>0.5</text:p></table:table-cell></table:table-row></table:table-rows></table:table>';
    const doc = await parse({ 'content.xml': content(table) });
    expect(doc.tables).toEqual([{ id: 'table_1', headers: [], rows: [[{ text_value: 'Otter river', colspan: 2 }], [{ int_value: 12 }, { float_value: 0.5 }]] }]);
    expect((await parse({ 'content.xml': content(table) }, false)).sections).toEqual([{ text: 'Otter river\n12 | 0.5' }]);
  });

  it('throws corrupt for a zip without content.xml, or whose content.xml has no text body', async () => {
    await expect(parse({ 'styles.xml': '<x/>' })).rejects.toMatchObject({ kind: 'corrupt' });
    await expect(parse({ 'content.xml': `<office:document-content ${NS}><office:body><office:spreadsheet/></office:body></office:document-content>` })).rejects.toMatchObject({
      kind: 'corrupt',
    });
    await expect(parseOdt(Buffer.from('PK\u0003\u0004 not really'), { extractTables: true })).rejects.toBeInstanceOf(ExtractionError);
  });
});
