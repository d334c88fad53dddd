import JSZip from 'jszip';
import { isTag, localName, parseXml, textOf } from '../shared/dom';
import { readMember } from '../shared/zip';

export interface CoreProperties {
  readonly title?: string;
  readonly metadata: Readonly<Record<string, string>>;
}

/** Core property (local name) → metadata key. `title` is not among them: it becomes the document title. */
const METADATA_KEYS: Readonly<Record<string, string>> = { creator: 'author', subject: 'subject', keywords: 'keywords', description: 'description' };

/** The OOXML core properties (docProps/core.xml) of a docx or pptx; empty values are left out. */
export async function readCoreProperties(zip: JSZip, format: string): Promise<CoreProperties> {
  const xml = await readMember(zip, 'docProps/core.xml', format);
  const root = xml === undefined ? undefined : parseXml(xml).children.find(isTag);
  let title: string | undefined;
  const metadata: Record<string, string> = {};
  for (const element of root ? root.children.filter(isTag) : []) {
    const name = localName(element);
    const value = textOf(element);
    if (value === '') continue;
    if (name === 'title') title = value;
    else if (METADATA_KEYS[name]) metadata[METADATA_KEYS[name]] = value;
  }
  return title === undefined ? { metadata } : { title, metadata };
}
