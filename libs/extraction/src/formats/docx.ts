import mammoth from 'mammoth';
import { ExtractionError, FormatParser } from '../extracted';
import { htmlToDocument } from './html';
import { readCoreProperties } from './office/core-properties';
import { openZip } from './shared/zip';

/** Pictures are not text: an empty src keeps mammoth from reading and base64-encoding every image. */
const skipImages = mammoth.images.imgElement(async () => ({ src: '' }));

/**
 * Word 2007+ documents: mammoth turns the body into HTML (Heading 1–6 → h1–h6, tables → <table>, repeated
 * header rows → <th>), the HTML parser turns that into sections and tables, and the core properties give the
 * title and author.
 */
export const parseDocx: FormatParser = async (file, options) => {
  const zip = await openZip(file, 'docx');
  if (!zip.file('word/document.xml')) throw new ExtractionError('corrupt', 'The docx file has no word/document.xml: it is not a Word document');
  const { value: html } = await mammoth.convertToHtml({ buffer: file }, { convertImage: skipImages });
  const body = htmlToDocument(html, options);
  const core = await readCoreProperties(zip, 'docx');
  const title = core.title ?? body.title;
  return { ...(title === undefined ? {} : { title }), metadata: { ...body.metadata, ...core.metadata }, sections: body.sections, tables: body.tables };
};
