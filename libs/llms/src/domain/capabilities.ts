/** What a model can do, as the reference API names it. */
export interface LlmCapabilities {
  readonly image_support: boolean;
  readonly context_limit: number;
  readonly tool_calling: boolean;
  readonly structured_outputs: boolean;
  readonly requires_role_alternation: boolean;
}

export const CAPABILITY_NAMES = ['image_support', 'context_limit', 'tool_calling', 'structured_outputs', 'requires_role_alternation'] as const;

const BASE: LlmCapabilities = { image_support: false, context_limit: 8192, tool_calling: false, structured_outputs: false, requires_role_alternation: false };

/**
 * Defaults by model family, matched on the model name. A guess from the name only (the reference API infers
 * the same way when capabilities are omitted); explicit fields override it and `POST /v2/llms/discover`
 * measures instead of guessing.
 */
const FAMILIES: readonly [RegExp, Partial<LlmCapabilities>][] = [
  [/^(gpt-4o|gpt-4\.1|gpt-5|o[134])/i, { image_support: true, context_limit: 128_000, tool_calling: true, structured_outputs: true }],
  [/^gpt-4/i, { context_limit: 128_000, tool_calling: true }],
  [/^gpt-3\.5/i, { context_limit: 16_385, tool_calling: true }],
  [/claude/i, { image_support: true, context_limit: 200_000, tool_calling: true, structured_outputs: true, requires_role_alternation: true }],
  [/gemini/i, { image_support: true, context_limit: 1_000_000, tool_calling: true, structured_outputs: true }],
  [/(llama-?3|qwen|mistral|mixtral)/i, { context_limit: 32_768, tool_calling: true }],
];

export function inferCapabilities(model: string): LlmCapabilities {
  const family = FAMILIES.find(([pattern]) => pattern.test(model));
  return { ...BASE, ...(family?.[1] ?? {}) };
}

export type ChatRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool';
export interface ChatMessage {
  readonly role: ChatRole;
  readonly content?: unknown;
  readonly [k: string]: unknown;
}

/**
 * For models that require strict role alternation: consecutive plain-text messages of the same role are
 * grouped into one (texts joined by a blank line); anything else (tool calls, content parts) is left as is.
 */
export function alternateRoles(messages: readonly ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of messages) {
    const last = out[out.length - 1];
    const plain = (x: ChatMessage) => typeof x.content === 'string' && Object.keys(x).every((k) => k === 'role' || k === 'content');
    if (last && last.role === m.role && plain(last) && plain(m)) out[out.length - 1] = { role: m.role, content: `${String(last.content)}\n\n${String(m.content)}` };
    else out.push(m);
  }
  return out;
}
