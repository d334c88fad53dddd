/**
 * The built-in generation presets: a prompt template (Apache Velocity rendering a JSON array of chat
 * messages, as the reference's presets do) and sampling defaults. They name no model: no model exists until
 * someone registers one, so a preset's model is resolved per request (docs/generation.md).
 */
export interface GenerationPreset {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly promptTemplate: string;
  readonly maxUsedSearchResults: number;
  readonly maxTokens: number;
  readonly temperature: number;
  readonly frequencyPenalty: number;
  readonly presencePenalty: number;
  readonly default: boolean;
}

/** Shared instructions: cite by number, only listed numbers, and say so when the results do not answer. */
const RULES =
  'Answer the question using only the numbered search results in this conversation. After each statement, cite the results that support it by their numbers in square brackets, such as [1] or [2][3]. Cite only numbers of listed results. Do not mention search results that do not help. If the results do not answer the question, say that they do not contain the answer.';

const LENGTH = '#if($vectaraOutChars) Keep the answer under $vectaraOutChars characters.#end';

/** One user message listing the results as [1] … [N], titles first when the document has one. */
const ONE_MESSAGE = `[
  {"role": "system", "content": "You are a search assistant. ${RULES}${LENGTH} Answer in $vectaraLangName."},
  {"role": "user", "content": "Search results:#foreach ($qResult in $vectaraQueryResults)\\n[$foreach.count] #if($qResult.docMetadata().get('title'))$qResult.docMetadata().get('title'): #end$qResult.getText()#end\\n\\nQuestion: $vectaraQuery"}
]`;

/** The reference's documented pattern: each result as an assistant turn, then the question. */
const TURNS = `[
  {"role": "system", "content": "You are a search assistant. ${RULES}${LENGTH} Answer in $vectaraLangName."},
  #foreach ($qResult in $vectaraQueryResults)
  {"role": "user", "content": "Give me search result [$foreach.count]."},
  {"role": "assistant", "content": "[$foreach.count] $qResult.getText()"},
  #end
  {"role": "user", "content": "Answer the question \\"$vectaraQuery\\" from the search results above, citing them by number."}
]`;

export const GENERATION_PRESETS: readonly GenerationPreset[] = [
  {
    id: 'gnp_1',
    name: 'rag-default',
    description: 'Answers from the top 5 results in one prompt, with numeric citations; the default preset',
    promptTemplate: ONE_MESSAGE,
    maxUsedSearchResults: 5,
    maxTokens: 1024,
    temperature: 0,
    frequencyPenalty: 0,
    presencePenalty: 0,
    default: true,
  },
  {
    id: 'gnp_2',
    name: 'rag-detailed',
    description: 'A longer answer from the top 25 results, with numeric citations',
    promptTemplate: ONE_MESSAGE,
    maxUsedSearchResults: 25,
    maxTokens: 2048,
    temperature: 0,
    frequencyPenalty: 0,
    presencePenalty: 0,
    default: false,
  },
  {
    id: 'gnp_3',
    name: 'rag-chat-turns',
    description: 'Gives each of the top 5 results as its own assistant turn before the question (the reference API\'s documented prompt pattern), with numeric citations',
    promptTemplate: TURNS,
    maxUsedSearchResults: 5,
    maxTokens: 1024,
    temperature: 0,
    frequencyPenalty: 0,
    presencePenalty: 0,
    default: false,
  },
];

export const DEFAULT_PRESET: GenerationPreset = GENERATION_PRESETS.find((p) => p.default)!;

export const findPreset = (name: string): GenerationPreset | undefined => GENERATION_PRESETS.find((p) => p.name === name);
