/**
 * The events entry of the llms context (`@lib/llms/events`): the event types of its streams. Domain code only:
 * importing it loads none of the provider SDKs.
 */
export type { LlmEvent, LlmSettings } from './domain/llm';
export type { GenerationPresetEvent, PresetSettings } from './domain/generation-preset';
export type { EncoderEvent, EncoderSettings } from './domain/encoder';
export type { LlmUsageEvent } from './domain/usage';
