import type { AgentConfig } from '../../domain/agent-config';
import { effectiveOffloading } from '../../domain/agent-config';

/**
 * A tool output too large for the context is truncated in place, head and tail kept: when it is over
 * `context_percentage` of the window on its own (clamped between the thresholds), or when adding it to the
 * `usedTokens` the prompt already holds would pass `headroom_percentage` of the window (the spec's two cases;
 * never below `min_threshold_bytes`). Four characters per token. Artifact mode needs the artifact tools of the
 * tools issue; until then it truncates as well.
 */
export function offload(output: Record<string, unknown>, config: AgentConfig, window: number, usedTokens = 0): Record<string, unknown> {
  const settings = effectiveOffloading(config);
  if (!settings.enabled) return output;
  const text = JSON.stringify(output);
  const bytes = Buffer.byteLength(text);
  if (bytes <= settings.min_threshold_bytes) return output;
  const alone = Math.min(settings.max_threshold_bytes, Math.max(settings.min_threshold_bytes, Math.floor(window * 4 * settings.context_percentage)));
  const room = Math.max(settings.min_threshold_bytes, Math.floor((window * settings.headroom_percentage - usedTokens) * 4));
  const threshold = Math.min(alone, room);
  if (bytes <= threshold) return output;
  const keep = Math.floor(threshold / 2) - 100;
  return { truncated: true, original_bytes: bytes, content: `${text.slice(0, keep)}\n… [${text.length - 2 * keep} characters omitted: the output was larger than ${threshold} bytes] …\n${text.slice(-keep)}` };
}

