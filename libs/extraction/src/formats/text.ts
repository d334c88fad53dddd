import { ExtractedDocument, ExtractOptions } from '../extracted';
import { decodeText, splitParagraphs } from './shared/text';

/**
 * Plain text → one untitled section, paragraphs split at blank lines. No title is guessed: a short first line
 * followed by a blank line is as often a greeting or a date as a heading.
 */
export async function parseText(file: Buffer, _options: ExtractOptions): Promise<ExtractedDocument> {
  const paragraphs = splitParagraphs(decodeText(file, 'txt'));
  return { metadata: {}, sections: paragraphs.length > 0 ? [{ text: paragraphs.join('\n\n') }] : [], tables: [] };
}
