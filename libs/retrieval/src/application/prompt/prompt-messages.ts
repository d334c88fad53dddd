import type { ChatMessage } from '@lib/llms';

export const PROMPT_ROLES = ['system', 'user', 'assistant'] as const;

/** The messages a rendered template holds, or why it holds none. */
export type ParsedMessages = { readonly messages: ChatMessage[] } | { readonly problem: string };

/**
 * Reads a rendered prompt: a JSON array of `{role, content}` messages. Two slips that hand-written Velocity
 * templates commonly make are forgiven, since they are unambiguous: a comma before `]` or `}` (left by
 * a `#foreach` that writes `},` after every item) and raw line breaks or tabs inside strings.
 */
export function parseMessages(rendered: string): ParsedMessages {
  let value: unknown;
  try {
    value = JSON.parse(rendered);
  } catch {
    try {
      value = JSON.parse(repairJson(rendered));
    } catch (e) {
      return { problem: `it is not valid JSON (${(e as Error).message})` };
    }
  }
  if (!Array.isArray(value) || value.length === 0) return { problem: 'it is not a non-empty JSON array' };
  for (const [i, m] of value.entries()) {
    if (m === null || typeof m !== 'object' || Array.isArray(m)) return { problem: `message ${i} is not an object` };
    const { role, content } = m as { role?: unknown; content?: unknown };
    if (!(PROMPT_ROLES as readonly unknown[]).includes(role)) return { problem: `message ${i} has role ${JSON.stringify(role)}; roles are ${PROMPT_ROLES.join(', ')}` };
    if (typeof content !== 'string') return { problem: `message ${i} has no text content` };
  }
  return { messages: (value as { role: ChatMessage['role']; content: string }[]).map(({ role, content }) => ({ role, content })) };
}

/** Drops commas before a closing bracket and escapes raw control characters inside strings. */
export function repairJson(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') {
        out += c + (text[i + 1] ?? '');
        i++;
      } else if (c === '"') {
        inString = false;
        out += c;
      } else if (c < ' ') {
        out += c === '\n' ? '\\n' : c === '\r' ? '\\r' : c === '\t' ? '\\t' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
      } else {
        out += c;
      }
      continue;
    }
    if (c === '"') inString = true;
    if (c === ',') {
      let next = i + 1;
      while (next < text.length && /\s/.test(text[next])) next++;
      if (text[next] === ']' || text[next] === '}') continue;
    }
    out += c;
  }
  return out;
}
