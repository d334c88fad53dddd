import iconv from 'iconv-lite';

/** RTF \fcharset → Windows code page (RTF 1.9.1 spec, \fcharset table); 0 and 1 mean the document's \ansicpg. */
const CHARSET_CODEPAGES: Readonly<Record<number, number>> = {
  77: 10000, 128: 932, 129: 949, 134: 936, 136: 950, 161: 1253, 162: 1254, 163: 1258, 177: 1255, 178: 1256, 186: 1257, 204: 1251, 222: 874, 238: 1250,
};

export const codepageOfCharset = (charset: number): number | undefined => CHARSET_CODEPAGES[charset];

const encodingOf = (codepage: number): string => (codepage === 65001 ? 'utf-8' : codepage === 10000 ? 'macintosh' : `cp${codepage}`);

/**
 * Decodes bytes in a Windows code page; an unknown code page is read as windows-1252 rather than failing the
 * file. iconv-lite (already installed with mailparser), not TextDecoder: Node's TextDecoder reads
 * "windows-1252" as ISO-8859-1, so 0x80–0x9F (€, curly quotes, dashes) come out as control characters.
 */
export function decodeCodepage(bytes: Buffer, codepage: number): string {
  const encoding = encodingOf(codepage);
  return iconv.decode(bytes, iconv.encodingExists(encoding) ? encoding : 'cp1252');
}

/** Decodes bytes in a named charset (an HTML or XML declaration's), or undefined when iconv-lite does not know it. */
export function decodeCharset(bytes: Buffer, charset: string): string | undefined {
  return iconv.encodingExists(charset) ? iconv.decode(bytes, charset) : undefined;
}
