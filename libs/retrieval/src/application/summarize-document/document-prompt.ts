import type { ChatMessage } from '@lib/llms';
import { invalid } from '@lib/platform';
import type { DocumentRow } from '@lib/corpora/read-models';
import { parseMessages, repairJson } from '../prompt/prompt-messages';
import { VelocityText } from '../prompt/prompt-template';
import { EscapeTool, PromptDocument, wrap } from '../prompt/prompt-values';

/** Characters of document text the default prompt carries; the rest is cut, and the prompt says so. */
export const MAX_DEFAULT_PROMPT_CHARS = 100_000;

const SYSTEM = 'You summarize documents accurately and concisely, using only what the document says.';

/** The rendered prompt: the messages sent and, as JSON text, the response's `rendered_prompt`. */
export interface SummaryPrompt {
  readonly messages: ChatMessage[];
  readonly text: string;
}

/** The document's text as the default prompt gives it: title, then each part (tables' parts are their rows' sentences). */
function documentText(row: DocumentRow): string {
  const text = [row.title, ...row.parts.map((p) => p.text)].filter(Boolean).join('\n');
  return text.length <= MAX_DEFAULT_PROMPT_CHARS ? text : `${text.slice(0, MAX_DEFAULT_PROMPT_CHARS)}\n[The document is longer; the rest was cut.]`;
}

/**
 * The prompt for summarising `row`. Without a template: a system message and the document's text. A template
 * (Velocity, with `$vectaraDocument` and `$document` as the reference's examples use them) may render a JSON array
 * of messages, one `{role, content}` message, or plain text, which is sent as the user's message.
 */
export function summaryPrompt(row: DocumentRow, template: string | undefined, field: string): SummaryPrompt {
  if (template === undefined) {
    const messages: ChatMessage[] = [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: `Summarize the following document.\n\n${documentText(row)}` },
    ];
    return { messages, text: JSON.stringify(messages) };
  }
  const document = {
    id: row.document_id,
    metadata: row.metadata,
    parts: row.parts.map((p) => {
      const table = p.tableId ? row.tables?.find((t) => t.id === p.tableId) : undefined;
      return { text: p.text, metadata: p.metadata, ...(table ? { table } : {}) };
    }),
    json: { id: row.document_id, ...(row.title ? { title: row.title } : {}), metadata: row.metadata, parts: row.parts.map((p) => ({ text: p.text, metadata: p.metadata })), tables: row.tables ?? [] },
  };
  const rendered = VelocityText.compile(template, field)
    .render({ vectaraDocument: new PromptDocument(document), document: wrap({ id: row.document_id, metadata: row.metadata }), esc: new EscapeTool() })
    .trim();
  const messages = asMessages(rendered);
  if (messages.length === 0 || messages.every((m) => !String(m.content ?? '').trim())) throw invalid('summarize.empty_prompt', `Invalid ${field}: it renders to an empty prompt`, { [field]: 'renders to an empty prompt' });
  return { messages, text: JSON.stringify(messages) };
}

/** A rendered template as messages: a JSON array of them, one `{role, content}` object, or plain text (the user's message). */
export function asMessages(rendered: string): ChatMessage[] {
  if (rendered.startsWith('[')) {
    const parsed = parseMessages(rendered);
    if ('messages' in parsed) return parsed.messages;
  }
  if (rendered.startsWith('{')) {
    const parsed = parseMessages(`[${rendered}]`);
    if ('messages' in parsed) return parsed.messages;
  }
  return rendered ? [{ role: 'user', content: plainText(rendered) }] : [];
}

/**
 * Values print JSON-escaped (templates are written to render JSON); in a plain-text prompt they are unescaped
 * again, unless the template's own text makes that ambiguous (a bare quote or backslash), when it is kept as rendered.
 */
function plainText(rendered: string): string {
  try {
    const text: unknown = JSON.parse(repairJson(`"${rendered}"`));
    return typeof text === 'string' ? text : rendered;
  } catch {
    return rendered;
  }
}
