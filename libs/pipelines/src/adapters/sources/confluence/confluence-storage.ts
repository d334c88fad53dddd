import { Parser } from 'htmlparser2';

/** An image of a page as the storage format names it: an attachment of the page (`ri:attachment`) or a URL (`ri:url`). */
export interface StorageImage {
  readonly filename?: string;
  readonly url?: string;
  readonly alt?: string;
}

const BLOCKS = new Set(['p', 'div', 'br', 'li', 'tr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'pre', 'blockquote', 'table', 'ul', 'ol', 'hr', 'ac:task', 'ac:layout-cell']);
// Macro parameters (a code block's language, a panel's colour) and placeholders are settings, not the page's text.
const HIDDEN = new Set(['ac:parameter', 'ac:placeholder', 'script', 'style']);

/**
 * A page body in Confluence's storage format (XHTML with `ac:` macros and `ri:` resources) as plain text: blocks
 * on their own lines, table cells separated by ` | `, code macro bodies (CDATA) kept, macro parameters left out.
 * Each `<ac:image>` is replaced by what `image` answers for it ('' leaves it out): the embedded_images rule.
 */
export function storageToText(storage: string, image: (img: StorageImage) => string): string {
  const out: string[] = [];
  let hidden = 0;
  let current: { filename?: string; url?: string; alt?: string } | null = null;
  let caption = false;
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (HIDDEN.has(name)) hidden++;
        if (BLOCKS.has(name)) out.push('\n');
        if (name === 'td' || name === 'th') out.push(' | ');
        if (name === 'ac:image') current = { alt: attrs['ac:alt'] || attrs['ac:title'] || undefined };
        if (name === 'ac:caption') caption = true;
        if (current && name === 'ri:attachment' && attrs['ri:filename']) current.filename = attrs['ri:filename'];
        if (current && name === 'ri:url' && attrs['ri:value']) current.url = attrs['ri:value'];
      },
      ontext(text) {
        if (hidden) return;
        if (current && caption) current.alt = `${current.alt ? `${current.alt} ` : ''}${text.trim()}`.trim();
        else if (!current) out.push(text);
      },
      onclosetag(name) {
        if (HIDDEN.has(name)) hidden = Math.max(0, hidden - 1);
        if (name === 'ac:caption') caption = false;
        if (name === 'ac:image' && current) {
          const said = image(current);
          if (said) out.push(` ${said} `);
          current = null;
        }
        if (BLOCKS.has(name)) out.push('\n');
      },
    },
    { recognizeCDATA: true, recognizeSelfClosing: true },
  );
  parser.end(storage);
  return out
    .join('')
    .replace(/\u00a0/g, ' ')
    .split('\n')
    .map((l) => l.replace(/[ \t]+/g, ' ').replace(/^ ?\| /, '').trim())
    .filter((l) => l !== '')
    .join('\n');
}
