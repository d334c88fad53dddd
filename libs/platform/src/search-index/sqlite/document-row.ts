/**
 * The most text a document's row in the document-level FTS table holds (docs/search.md, "Large documents"), and
 * as much again for its distinct section titles. FTS5 writes a row in one statement and its terms at the commit:
 * a 5.5 MB document of 800,000 distinct words held the event loop ~2 s in that row alone, and its document-level
 * BM25 (length-normalised over millions of words) told the ranking nothing. Past this, the row holds the document's
 * first parts; every part is still indexed in full on its own.
 */
export const DOCUMENT_ROW_CHARS = 256 * 1024;

/**
 * A document's row: its parts' text joined by newlines, cut after the last whole word that fits
 * `DOCUMENT_ROW_CHARS`, and each distinct section title once, within the same bound. The search index writes it
 * and the lexical postings rebuild it from the parts (a contentless row): both go through here, so they agree.
 */
export function documentRowOf(parts: Iterable<{ readonly text: string; readonly title?: string | null }>, max = DOCUMENT_ROW_CHARS): { text: string; title: string | null } {
  const texts: string[] = [];
  const titles = new Set<string>();
  let textRoom = max;
  let titleRoom = max;
  for (const part of parts) {
    if (textRoom > 0) {
      if (part.text.length <= textRoom) {
        texts.push(part.text);
        textRoom -= part.text.length + 1;
      } else {
        // The first part that does not fit is the last: its words that do, if any.
        const cut = part.text.lastIndexOf(' ', textRoom);
        if (cut > 0) texts.push(part.text.slice(0, cut));
        textRoom = 0;
      }
    }
    const title = part.title;
    if (title && titleRoom > title.length && !titles.has(title)) {
      titles.add(title);
      titleRoom -= title.length + 1;
    }
  }
  return { text: texts.join('\n'), title: titles.size ? [...titles].join('\n') : null };
}

