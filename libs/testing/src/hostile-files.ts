import JSZip from 'jszip';

/**
 * Builders of hostile uploads (issue 22): small files that cost a parser or the chunker far more than their size
 * suggests. Shared by the tests and the `hostile-uploads` bench, so both exercise the same shapes.
 */

/** Plain text of many short sentences in one paragraph, about `bytes` long. */
export function manySentencesText(bytes: number): string {
  const out: string[] = [];
  let length = 0;
  for (let i = 0; length < bytes; i++) {
    const sentence = `Otter ${i} dives. `;
    out.push(sentence);
    length += sentence.length;
  }
  return out.join('');
}

/** `count` short sentences, as text for one section of a structured document. */
export const sentencesText = (count: number): string => Array.from({ length: count }, (_, i) => `Otter ${i} dives.`).join(' ');

const CONTENT_TYPES =
  '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
  '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' +
  '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>';
const ROOT_RELS =
  '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
  '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>';
const documentXml = (body: string): string =>
  `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`;
const paragraph = (text: string): string => `<w:p><w:r><w:t>${text}</w:t></w:r></w:p>`;

function docxZip(body: string): JSZip {
  const zip = new JSZip();
  zip.file('[Content_Types].xml', CONTENT_TYPES);
  zip.file('_rels/.rels', ROOT_RELS);
  zip.file('word/document.xml', documentXml(body));
  return zip;
}

const deflated = (zip: JSZip): Promise<Buffer> => zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE', compressionOptions: { level: 9 } });

/** A Word document of `count` one-word paragraphs: tiny once deflated, one section of `count` paragraphs once read. */
export function manyParagraphsDocx(count: number): Promise<Buffer> {
  return deflated(docxZip(Array.from({ length: count }, () => paragraph('Otter.')).join('')));
}

/**
 * A Word document whose body is one readable paragraph and `inflatedBytes` of spaces (deflate shrinks them about
 * a thousandfold), in word/document.xml, the part every reader of the format inflates. With `declaredBytes`, the
 * size its headers declare for that part is rewritten: a bomb that lies about its size, which only a count taken
 * while inflating catches.
 */
export async function zipBombDocx(inflatedBytes: number, declaredBytes?: number): Promise<Buffer> {
  const zip = docxZip('');
  const name = 'word/document.xml';
  const [head, tail] = documentXml(`${paragraph('The otter sentence.')}\u0000`).split('\u0000');
  zip.file(name, Buffer.concat([Buffer.from(head), Buffer.alloc(inflatedBytes, 0x20), Buffer.from(tail)]));
  const file = await deflated(zip);
  return declaredBytes === undefined ? file : declareUncompressedSize(file, name, declaredBytes);
}

/** Rewrites the uncompressed size of one entry in its local header and in the central directory. */
function declareUncompressedSize(file: Buffer, name: string, size: number): Buffer {
  const out = Buffer.from(file);
  const encoded = Buffer.from(name);
  for (let at = 0; at < out.length - 46; at++) {
    const signature = out.readUInt32LE(at);
    if (signature === 0x04034b50 && out.subarray(at + 30, at + 30 + encoded.length).equals(encoded)) out.writeUInt32LE(size, at + 22);
    if (signature === 0x02014b50 && out.subarray(at + 46, at + 46 + encoded.length).equals(encoded)) out.writeUInt32LE(size, at + 24);
  }
  return out;
}

/**
 * A PDF whose page tree shares its nodes: `fanout` kids per level, `depth` levels, so fanout^depth pages (10^4 from
 * a file under 2 KB), every one drawing the same text.
 */
export function pageBombPdf(fanout = 10, depth = 4): Buffer {
  const objects: string[] = [];
  // 1: catalog, 2: root pages node; levels 3..(depth+1) are intermediate nodes; then page, content, font.
  const page = depth + 2;
  const content = page + 1;
  const font = page + 2;
  const kids = (ref: number) => `[${Array.from({ length: fanout }, () => `${ref} 0 R`).join(' ')}]`;
  objects[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  for (let level = 0; level < depth; level++) {
    const id = 2 + level;
    const below = level === depth - 1 ? page : id + 1;
    const parent = level === 0 ? '' : ` /Parent ${id - 1} 0 R`;
    objects[id] = `<< /Type /Pages${parent} /Kids ${kids(below)} /Count ${fanout ** (depth - level)} >>`;
  }
  const stream = 'BT /F1 12 Tf 72 720 Td (The otter page.) Tj ET';
  objects[page] = `<< /Type /Page /Parent ${depth + 1} 0 R /MediaBox [0 0 612 792] /Contents ${content} 0 R /Resources << /Font << /F1 ${font} 0 R >> >> >>`;
  objects[content] = `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`;
  objects[font] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>';
  let pdf = '%PDF-1.4\n';
  const offsets: number[] = [];
  for (let id = 1; id < objects.length; id++) {
    offsets[id] = pdf.length;
    pdf += `${id} 0 obj\n${objects[id]}\nendobj\n`;
  }
  const xref = pdf.length;
  pdf += `xref\n0 ${objects.length}\n0000000000 65535 f \n${offsets.slice(1).map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  pdf += `trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(pdf, 'latin1');
}
