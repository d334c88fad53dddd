import WordExtractor from 'word-extractor';
import { ExtractedSection, ExtractionError, FormatParser } from '../extracted';

/**
 * Word 97–2003 documents through word-extractor, which yields the text of each story (body, text boxes,
 * footnotes, endnotes) but no paragraph styles: headings cannot be told from body text, so the body is one
 * untitled section, and text boxes, footnotes and endnotes follow as further untitled sections when present.
 * Headers and footers (repeated on every page) and comments are left out. Table cells arrive tab-separated,
 * one row per line, and stay text. A .docx saved under a .doc name is read too (word-extractor detects it), flat.
 */
export const parseDoc: FormatParser = async (file) => {
  let document: WordExtractor.Document;
  try {
    document = await new WordExtractor().extract(file);
  } catch (e) {
    throw new ExtractionError('corrupt', `The doc file could not be read: ${(e as Error).message}`);
  }
  const stories = [document.getBody(), document.getTextboxes({ includeHeadersAndFooters: false }), document.getFootnotes(), document.getEndnotes()];
  const sections: ExtractedSection[] = stories.map(paragraphsOf).filter((paragraphs) => paragraphs.length > 0).map((paragraphs) => ({ text: paragraphs.join('\n\n') }));
  return { metadata: {}, sections, tables: [] };
};

/** One paragraph per line; tabs (cell ends, tab stops) and runs of spaces become one space. */
const paragraphsOf = (story: string): string[] =>
  story
    .split(/\r?\n/)
    .map((line) => line.replace(/[\t ]+/g, ' ').trim())
    .filter((line) => line !== '');
