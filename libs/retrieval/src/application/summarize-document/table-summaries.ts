import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { ChatCompletions, ChatMessage } from '@lib/llms';
import { invalid } from '@lib/platform';
import { DocumentTable, SummarizeTables } from '@lib/corpora';
import { GenerationModels } from '../model/generation-models';
import { VelocityText } from '../prompt/prompt-template';
import { EscapeTool, PromptJson, wrap } from '../prompt/prompt-values';
import { asMessages } from './document-prompt';

const FIELD = 'table_extraction_config.generation';

/** Table cells as plain rows of text, for the default prompt (the typed JSON is noisier for a model). */
function tableText(t: DocumentTable): string {
  const cell = (c: Record<string, unknown>) => String(Object.entries(c).find(([k]) => k !== 'colspan')?.[1] ?? '');
  const rows = [...t.data.headers, ...t.data.rows].map((r) => r.map((c) => cell(c as Record<string, unknown>)).join(' | '));
  return [t.title ? `Title: ${t.title}` : undefined, ...rows].filter(Boolean).join('\n');
}

function tablePrompt(table: DocumentTable, template: VelocityText | undefined): ChatMessage[] {
  if (!template) {
    return [
      { role: 'system', content: 'You describe tables for a search index: what the table is about and what it shows, in one to three sentences, using only what the table holds.' },
      { role: 'user', content: `Summarize this table.\n\n${tableText(table)}` },
    ];
  }
  const rendered = template.render({ vectaraTable: new PromptJson(table), table: wrap({ id: table.id, title: table.title ?? '' }), esc: new EscapeTool() }).trim();
  const messages = asMessages(rendered);
  if (messages.every((m) => !String(m.content ?? '').trim())) throw invalid('upload.empty_table_prompt', `Invalid ${FIELD}.prompt_template: it renders to an empty prompt`, { [`${FIELD}.prompt_template`]: 'renders to an empty prompt' });
  return messages;
}

/**
 * One summary per table of an upload, through the registered model the request names (or the generation default),
 * on the chat path (quotas, usage recorded). Calls run one after another: a file's tables are few (at most 50)
 * and a burst would meet the model's rate limit first.
 */
@QueryHandler(SummarizeTables)
export class SummarizeTablesHandler implements IQueryHandler<SummarizeTables, string[]> {
  constructor(
    private readonly models: GenerationModels,
    private readonly chat: ChatCompletions,
  ) {}

  async execute(q: SummarizeTables): Promise<string[]> {
    const model = await this.models.resolve(q.spec.llmName, `${FIELD}.llm_name`);
    const template = q.spec.promptTemplate === undefined ? undefined : VelocityText.compile(q.spec.promptTemplate, `${FIELD}.prompt_template`);
    const prompts = q.tables.map((t) => tablePrompt(t, template));
    const summaries: string[] = [];
    for (const messages of prompts) {
      const completion = await this.chat.complete({ model, messages, ...q.spec.sampling }, q.ctx);
      const content = completion.choices[0]?.message?.content;
      summaries.push(typeof content === 'string' ? content : '');
    }
    return summaries;
  }
}
