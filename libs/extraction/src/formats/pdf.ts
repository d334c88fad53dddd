import { FormatParser } from '../extracted';
import { pdfBlocks } from './office/pdf-structure';
import { readPdf } from './office/pdf-reader';
import { sectionsFromBlocks } from './shared/sections';

/**
 * PDF through pdf2json's positioned text runs. Structure is recovered from positions, a heuristic (see
 * office/pdf-structure.ts and pdf-layout.ts): headings by font size, paragraphs by vertical gaps, and, with
 * extractTables, tables from column-aligned lines. The title and author come from the info dictionary. A PDF
 * without a text layer (a scan) yields no sections, which the dispatcher reports as empty.
 */
export const parsePdf: FormatParser = async (file, options) => {
  const { info, pages } = await readPdf(file);
  const { blocks, tables } = pdfBlocks(pages, options.extractTables);
  const title = typeof info.Title === 'string' ? info.Title.trim() : '';
  const author = typeof info.Author === 'string' ? info.Author.trim() : '';
  return {
    ...(title ? { title } : {}),
    metadata: { ...(author ? { author } : {}), page_count: pages.length },
    sections: sectionsFromBlocks(blocks),
    tables,
  };
};
