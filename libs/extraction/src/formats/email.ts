import { AddressObject, simpleParser } from 'mailparser';
import { ExtractedDocument, ExtractedSection, ExtractionError, ExtractOptions } from '../extracted';
import { htmlToDocument } from './html';
import { assertLooksLikeTextBytes, splitParagraphs } from './shared/text';

/**
 * RFC 822 message → one section titled by the subject. The plain-text body is preferred; an HTML-only
 * message is read through the HTML walker (its headings nest under the subject, its tables are extracted).
 * Attachments are not parsed: their file names are listed in the `attachments` metadata field.
 */
export async function parseEmail(file: Buffer, options: ExtractOptions): Promise<ExtractedDocument> {
  assertLooksLikeTextBytes(file, 'e-mail');
  const mail = await simpleParser(file, { skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true, skipImageLinks: true });
  if (!['from', 'to', 'subject', 'date', 'message-id'].some((name) => mail.headers.has(name))) {
    throw new ExtractionError('corrupt', 'The e-mail has none of the headers From, To, Subject, Date or Message-ID');
  }
  const subject = mail.subject?.trim() ?? '';
  const metadata: Record<string, unknown> = {};
  const put = (key: string, value: string | undefined) => {
    if (value?.trim()) metadata[key] = value.trim();
  };
  put('from', mail.from?.text);
  put('to', addresses(mail.to));
  put('cc', addresses(mail.cc));
  put('date', mail.date && !Number.isNaN(mail.date.getTime()) ? mail.date.toISOString() : undefined);
  put('message_id', mail.messageId);
  const attachments = mail.attachments.map((a) => a.filename ?? a.contentType);
  if (attachments.length > 0) metadata.attachments = attachments;

  const title = subject ? { title: subject } : {};
  const text = mail.text ? splitParagraphs(mail.text).join('\n\n') : '';
  if (text || typeof mail.html !== 'string') {
    return { ...title, metadata, sections: [{ ...title, text }], tables: [] };
  }
  const html = htmlToDocument(mail.html, options);
  const [first, ...rest] = html.sections;
  const section: ExtractedSection =
    first && !first.title ? { ...title, text: first.text, ...(rest.length ? { sections: rest } : {}) } : { ...title, text: '', ...(html.sections.length ? { sections: html.sections } : {}) };
  return { ...title, metadata, sections: [section], tables: html.tables };
}

const addresses = (value: AddressObject | AddressObject[] | undefined): string | undefined =>
  value === undefined ? undefined : (Array.isArray(value) ? value : [value]).map((a) => a.text).join(', ');
