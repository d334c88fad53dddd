import { htmlToDocument, parseHtml } from './html';

const withTables = { extractTables: true };

describe('htmlToDocument', () => {
  it('reads a bare fragment (as mammoth writes it): no title, headings nest, list items are paragraphs', () => {
    const doc = htmlToDocument('<h1>Otters</h1><p>Lead &amp; more</p><ul><li>one<ul><li>one.a</li></ul></li><li>two</li></ul><h3>Deep</h3><p>x</p>', withTables);
    expect(doc.title).toBeUndefined();
    expect(doc.sections).toEqual([{ title: 'Otters', text: 'Lead & more\n\none\n\none.a\n\ntwo', sections: [{ title: 'Deep', text: 'x' }] }]);
  });

  it('keeps <pre> white space and <br> line breaks, collapses other white space, splits text around blocks', () => {
    const doc = htmlToDocument('<div>loose   text<p>para\n  one<br>line two</p>tail</div><pre>  a\n    b\n</pre>', withTables);
    expect(doc.sections[0].text).toBe('loose text\n\npara one\nline two\n\ntail\n\n  a\n    b');
  });

  it('reads a table without <thead>: leading <th> rows are headers, colspan is kept, caption is the title', () => {
    const html = '<table><caption>Counts</caption><tr><th>Species</th><th>Count</th></tr><tr><td colspan="2">Otter 12</td></tr><tr><td>Heron</td><td>7</td></tr></table>';
    expect(htmlToDocument(html, withTables).tables).toEqual([
      {
        id: 'table_1',
        title: 'Counts',
        headers: [[{ text_value: 'Species' }, { text_value: 'Count' }]],
        rows: [[{ text_value: 'Otter 12', colspan: 2 }], [{ text_value: 'Heron' }, { int_value: 7 }]],
      },
    ]);
    expect(htmlToDocument(html, { extractTables: false }).sections).toEqual([{ text: 'Counts\nSpecies | Count\nOtter 12\nHeron | 7' }]);
  });

  it('numbers tables in document order and reads a nested data table on its own', () => {
    const html = '<table><tr><td><h2>Layout</h2><table><tr><td>1</td></tr></table></td></tr></table><table><tr><td>2.5</td></tr></table>';
    const doc = htmlToDocument(html, withTables);
    expect(doc.tables.map((t) => [t.id, t.rows])).toEqual([
      ['table_1', [[{ int_value: 1 }]]],
      ['table_2', [[{ float_value: 2.5 }]]],
    ]);
    expect(doc.sections).toEqual([{ title: 'Layout', text: '' }]);
  });

  it('leaves out script, style, nav, template and svg text, and empty tables', () => {
    const html = '<body><nav>Menu</nav><p>Kept<script>x()</script></p><template><p>t</p></template><svg><text>chart</text></svg><table><tr><td> </td></tr></table></body>';
    expect(htmlToDocument(html, withTables)).toEqual({ metadata: {}, sections: [{ text: 'Kept' }], tables: [] });
  });

  it('takes the title from <head> only, not from an <svg> title in the body', () => {
    const doc = htmlToDocument('<html><head><title> Field\n notes </title><meta name="description" content="Otters"></head><body><svg><title>Icon</title></svg><p>x</p></body></html>', withTables);
    expect(doc.title).toBe('Field notes');
    expect(doc.metadata).toEqual({ description: 'Otters' });
    expect(htmlToDocument('<body><svg><title>Icon</title></svg><p>x</p></body>', withTables).title).toBeUndefined();
  });

  it('in XHTML mode a self-closing tag closes itself', () => {
    const html = '<p><a id="x"/>after</p><h2>Next</h2>';
    expect(htmlToDocument(html, { extractTables: true, xhtml: true }).sections).toEqual([{ text: 'after' }, { title: 'Next', text: '' }]);
  });
});

describe('parseHtml', () => {
  it('decodes windows-1252 bytes when the file is not UTF-8', async () => {
    const doc = await parseHtml(Buffer.from([...Buffer.from('<p>caf'), 0xe9, ...Buffer.from('</p>')]), withTables);
    expect(doc.sections).toEqual([{ text: 'café' }]);
  });

  it('reads non-UTF-8 bytes in the charset the page declares', async () => {
    const page = Buffer.concat([Buffer.from('<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1251"></head><body><p>'), Buffer.from([0xc2, 0xfb, 0xe4, 0xf0, 0xe0]), Buffer.from('</p></body></html>')]);
    expect((await parseHtml(page, withTables)).sections).toEqual([{ text: 'Выдра' }]);
  });
});
