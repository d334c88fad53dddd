import JSZip from 'jszip';
import { parseEpub } from './epub';

const CONTAINER = '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OPS/book.opf" media-type="application/oebps-package+xml"/></rootfiles></container>';

const opf = (manifest: string, spine: string) =>
  `<?xml version="1.0"?><opf:package xmlns:opf="http://www.idpf.org/2007/opf" xmlns:dc="http://purl.org/dc/elements/1.1/" version="2.0">
  <opf:metadata><dc:title>River Book</dc:title><dc:creator>Ann Author</dc:creator></opf:metadata>
  <opf:manifest>${manifest}</opf:manifest><opf:spine toc="ncx">${spine}</opf:spine></opf:package>`;

const chapter = (body: string) => `<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>Book</title></head><body>${body}</body></html>`;

const NCX = `<?xml version="1.0"?><ncx xmlns="http://www.daisy.org/z3986/2005/ncx/"><navMap>
  <navPoint id="a"><navLabel><text>Chapter One</text></navLabel><content src="text/one.xhtml#start"/>
    <navPoint id="a1"><navLabel><text>Nested entry</text></navLabel><content src="text/one.xhtml#later"/></navPoint></navPoint>
  <navPoint id="b"><navLabel><text>Heron  days</text></navLabel><content src="text/two%20b.xhtml"/></navPoint></navMap></ncx>`;

async function epub(files: Record<string, string>): Promise<Buffer> {
  const zip = new JSZip();
  zip.file('mimetype', 'application/epub+zip');
  for (const [name, text] of Object.entries(files)) zip.file(name, text);
  return zip.generateAsync({ type: 'nodebuffer' });
}

const BOOK = {
  'META-INF/container.xml': CONTAINER,
  'OPS/book.opf': opf(
    '<opf:item id="two" href="text/two%20b.xhtml" media-type="application/xhtml+xml"/><opf:item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>' +
      '<opf:item id="one" href="text/one.xhtml" media-type="application/xhtml+xml"/><opf:item id="cover" href="cover.jpg" media-type="image/jpeg"/>',
    '<opf:itemref idref="cover"/><opf:itemref idref="one"/><opf:itemref idref="two"/>',
  ),
  'OPS/toc.ncx': NCX,
  'OPS/text/one.xhtml': chapter('<h1>Otters</h1><p>Lead.</p><h2>Diet</h2><p>Fish.</p><table><tr><th>n</th></tr><tr><td>3</td></tr></table>'),
  'OPS/text/two b.xhtml': chapter('<p>Herons wait.</p><table><tr><td>1.5</td></tr></table><table><tr><td>x</td></tr></table>'),
};

describe('parseEpub', () => {
  it('reads the spine in order; a chapter with one top heading is that section, one without takes its NCX title', async () => {
    const doc = await parseEpub(await epub(BOOK), { extractTables: true });
    expect(doc.title).toBe('River Book');
    expect(doc.metadata).toEqual({ author: 'Ann Author' });
    expect(doc.sections).toEqual([
      { title: 'Otters', text: 'Lead.', sections: [{ title: 'Diet', text: 'Fish.' }] },
      { title: 'Heron days', text: 'Herons wait.' },
    ]);
    expect(doc.tables.map((t) => [t.id, t.rows])).toEqual([
      ['table_1', [[{ int_value: 3 }]]],
      ['table_2', [[{ float_value: 1.5 }]]],
      ['table_3', [[{ text_value: 'x' }]]],
    ]);
  });

  it('prefers the EPUB 3 nav document, and leaves a chapter without any title untitled', async () => {
    const nav = '<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><body><nav epub:type="toc"><ol><li><a href="text/one.xhtml">Nav One</a></li></ol></nav></body></html>';
    const files = {
      ...BOOK,
      'OPS/book.opf': opf(
        '<opf:item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/><opf:item id="one" href="text/one.xhtml" media-type="application/xhtml+xml"/><opf:item id="two" href="text/two%20b.xhtml" media-type="application/xhtml+xml"/>',
        '<opf:itemref idref="one"/><opf:itemref idref="two"/>',
      ),
      'OPS/nav.xhtml': nav,
      'OPS/text/one.xhtml': chapter('<p>Untitled start.</p><h2>Part</h2><p>More.</p>'),
    };
    const doc = await parseEpub(await epub(files), { extractTables: false });
    expect(doc.sections).toEqual([{ title: 'Nav One', text: 'Untitled start.', sections: [{ title: 'Part', text: 'More.' }] }, { text: 'Herons wait.\n\n1.5\n\nx' }]);
  });

  it('throws corrupt without a container, with a container naming a missing OPF, or with no chapter in the spine', async () => {
    const { 'META-INF/container.xml': _container, ...noContainer } = BOOK;
    const { 'OPS/book.opf': _opf, ...noOpf } = BOOK;
    const noChapters = { ...BOOK, 'OPS/book.opf': opf('<opf:item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>', '') };
    for (const files of [noContainer, noOpf, noChapters]) {
      await expect(parseEpub(await epub(files), { extractTables: true })).rejects.toMatchObject({ kind: 'corrupt' });
    }
  });
});
