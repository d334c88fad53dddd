/** The part of word-extractor 1.0 (which ships no types) that parseDoc uses; see its README. */
declare module 'word-extractor' {
  class WordExtractor {
    /** Reads a Word 97–2003 (.doc) or 2007+ (.docx) file from a path or a buffer. */
    extract(source: string | Buffer): Promise<WordExtractor.Document>;
  }
  namespace WordExtractor {
    interface Document {
      getBody(): string;
      getFootnotes(): string;
      getEndnotes(): string;
      getAnnotations(): string;
      getHeaders(options?: { includeFooters?: boolean }): string;
      getFooters(): string;
      getTextboxes(options?: { includeHeadersAndFooters?: boolean; includeBody?: boolean }): string;
    }
  }
  export = WordExtractor;
}
