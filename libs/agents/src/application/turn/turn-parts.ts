import Ajv from 'ajv';
import { linearRegExp } from '@lib/platform';
import { VelocityText } from '@lib/retrieval';
import type { AgentConfig } from '../../domain/agent-config';
import type { PromptMessage } from '../../domain/history';
import type { ActiveSession } from '../../domain/session';

/** Context window assumed when the model's registration gives none. */
export const DEFAULT_CONTEXT_WINDOW = 128_000;

const ajv = new Ajv({ allErrors: false, strict: false, code: { regExp: linearRegExp } });

/** What templates and conditions read: `agent`, `session`, `currentDate`; the prompt's templates `memory` too (by block key). */
export function templateContext(config: AgentConfig, agentKey: string, s: ActiveSession, now: Date, memory?: Record<string, string>): Record<string, unknown> {
  return {
    ...(memory ? { memory } : {}),
    agent: { key: agentKey, name: config.name, description: config.description ?? '', metadata: config.metadata },
    session: { key: s.key, name: s.fields.name, description: s.fields.description ?? '', metadata: s.fields.metadata },
    currentDate: now.toISOString(),
  };
}

/** Compiled templates by field and source: a turn renders the same instructions and reminders every time. */
const compiled = new Map<string, VelocityText>();
const MAX_COMPILED = 1000;

export function renderTemplate(template: string, type: 'velocity' | 'text' | undefined, context: Record<string, unknown>, field: string): string {
  if (type === 'text') return template;
  const key = `${field}\u0000${template}`;
  let velocity = compiled.get(key);
  if (!velocity) {
    velocity = VelocityText.compile(template, field);
    if (compiled.size >= MAX_COMPILED) compiled.clear();
    compiled.set(key, velocity);
  }
  return velocity.render(context);
}

export function latestToolOutputs(s: ActiveSession): Record<string, { outputs: { latest: unknown } }> {
  const out: Record<string, { outputs: { latest: unknown } }> = {};
  for (const e of s.events) if (e.type === 'SessionToolReturned') out[e.data.toolConfigurationName] = { outputs: { latest: e.data.toolOutput } };
  return out;
}

export function structuredProblem(content: string, schema: Record<string, unknown>): string {
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    return 'it is not valid JSON';
  }
  let validate;
  try {
    validate = ajv.compile(schema);
  } catch (e) {
    return `the schema does not compile (${(e as Error).message})`;
  }
  if (validate(value)) return '';
  const err = validate.errors?.[0];
  return `${err?.instancePath || '(root)'} ${err?.message ?? 'does not match'}`;
}

/** About four characters per token, as the spec's offloading rules estimate. */
export const estimateTokens = (messages: readonly PromptMessage[]): number =>
  Math.ceil(messages.reduce((n, m) => n + contentChars(m.content) + JSON.stringify(m.tool_calls ?? '').length, 0) / 4);

/** Characters of a message's content; an image counts as 3,000 (≈ 765 tokens, a high-detail tile's order). */
function contentChars(content: PromptMessage['content']): number {
  if (content === null) return 0;
  if (typeof content === 'string') return content.length;
  return content.reduce((n, part) => n + (part.type === 'text' ? part.text.length : 3000), 0);
}
