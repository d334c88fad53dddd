import { givenEvents } from '@lib/testing';
import { DocumentImage, DocumentTable, MAX_IMAGE_BYTES } from './attachments';
import { decideIndexDocument, DocumentInput, documentFold, eachPart } from './document';

const now = new Date('2026-11-23T10:00:00.000Z');
const png = (id: string, extra: Partial<DocumentImage> = {}): DocumentImage => ({ id, mimeType: 'image/png', data: Buffer.from(`png ${id}`).toString('base64'), ...extra });
const table = (id: string): DocumentTable => ({ id, title: `Table ${id}`, data: { headers: [[{ text_value: 'k' }]], rows: [[{ int_value: 1 }]] } });
const index = (input: DocumentInput) => givenEvents(documentFold, []).when((s) => decideIndexDocument(s, { corpusKey: 'k', corpusId: 'crp_1', input }, now));

describe('tables and images of a document', () => {
  it('puts each section\'s table and image parts after its text, with its metadata, and the document\'s own last', () => {
    const input: DocumentInput = {
      type: 'structured',
      id: 'd',
      metadata: {},
      sections: [{ title: 'S1', text: 'One.', metadata: { s: 1 }, tables: [table('t1')], images: [png('i1', { caption: 'A heron.' }), png('silent')] }, { text: 'Two.' }],
      images: [png('i2', { title: 'Cover', description: 'Blue cover.' })],
    };
    expect([...eachPart(input)].map((p) => [p.text.slice(0, 12), p.tableId ?? p.imageId ?? '-', p.metadata])).toEqual([
      ['One.', '-', { s: 1 }],
      ['Table t1. Ta', 't1', { s: 1 }],
      ['A heron.', 'i1', { s: 1 }],
      ['Two.', '-', {}],
      ['Cover. Blue ', 'i2', {}],
    ]);
    const [event] = decideIndexDocument({ status: 'absent' }, { corpusKey: 'k', corpusId: 'crp_1', input }, now);
    expect(event.type === 'DocumentIndexed' && [event.data.tables?.map((t) => t.id), event.data.images?.map((i) => i.id), event.data.stats.imageBytes]).toEqual([
      ['t1'],
      ['i1', 'silent', 'i2'],
      'png i1'.length + 'png silent'.length + 'png i2'.length,
    ]);
  });

  it('refuses duplicate ids, core parts naming a table or image the document lacks, and oversize images', () => {
    const core = (patch: Partial<Extract<DocumentInput, { type: 'core' }>>): DocumentInput => ({ type: 'core', id: 'd', metadata: {}, parts: [{ text: 'x' }], ...patch });
    index(core({ images: [png('a'), png('a')] })).thenFails({ code: 'document.duplicate_attachment_id' });
    index(core({ tables: [table('t'), table('t')] })).thenFails({ code: 'document.duplicate_attachment_id' });
    index(core({ parts: [{ text: 'x', tableId: 'nope' }] })).thenFails({ code: 'document.unknown_table' });
    index(core({ parts: [{ text: 'x', imageId: 'nope' }] })).thenFails({ code: 'document.unknown_image' });
    index(core({ images: [png('big', { data: Buffer.alloc(MAX_IMAGE_BYTES + 1).toString('base64') })] })).thenFails({ code: 'document.image_too_large' });
    index(core({ images: [png('ok')], parts: [{ text: 'x', imageId: 'ok' }] })).then([expect.objectContaining({ type: 'DocumentIndexed' })]);
  });
});
