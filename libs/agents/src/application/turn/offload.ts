import type { AgentConfig, OffloadingConfig } from '../../domain/agent-config';
import { effectiveOffloading } from '../../domain/agent-config';

/** Whether a tool output must leave the context, and how (`artifact` or `truncate`), with the byte threshold. */
export type OffloadDecision = { readonly over: false } | { readonly over: true; readonly threshold: number; readonly mode: 'artifact' | 'truncate'; readonly bytes: number };

/**
 * A tool output too large for the context: over `context_percentage` of the window on its own (clamped between
 * the thresholds), or pushing the prompt's `usedTokens` past `headroom_percentage` of the window (the spec's two
 * cases; never below `min_threshold_bytes`). Four characters per token. `override` is the tool's own settings
 * (unset fields inherit the agent's).
 */
export function offloadDecision(output: Record<string, unknown>, config: AgentConfig, window: number, usedTokens = 0, override?: OffloadingConfig): OffloadDecision {
  const settings = { ...effectiveOffloading(config), ...override };
  if (!settings.enabled) return { over: false };
  const bytes = Buffer.byteLength(JSON.stringify(output));
  if (bytes <= settings.min_threshold_bytes) return { over: false };
  const alone = Math.min(settings.max_threshold_bytes, Math.max(settings.min_threshold_bytes, Math.floor(window * 4 * settings.context_percentage)));
  const room = Math.max(settings.min_threshold_bytes, Math.floor((window * settings.headroom_percentage - usedTokens) * 4));
  const threshold = Math.min(alone, room);
  return bytes <= threshold ? { over: false } : { over: true, threshold, mode: settings.mode, bytes };
}

/** The output cut in place, head and tail kept, with a notice of what was left out. */
export function truncateOutput(output: Record<string, unknown>, threshold: number): Record<string, unknown> {
  const text = JSON.stringify(output);
  const keep = Math.max(1, Math.floor(threshold / 2) - 100);
  return { truncated: true, original_bytes: Buffer.byteLength(text), content: `${text.slice(0, keep)}\n… [${text.length - 2 * keep} characters omitted: the output was larger than ${threshold} bytes] …\n${text.slice(-keep)}` };
}

/** Truncation as the decision says (artifact mode is the turn's: it stores the output as an artifact). */
export function offload(output: Record<string, unknown>, config: AgentConfig, window: number, usedTokens = 0): Record<string, unknown> {
  const decision = offloadDecision(output, config, window, usedTokens);
  return decision.over ? truncateOutput(output, decision.threshold) : output;
}
