/**
 * Response languages: the reference API's `Language` enum (ISO 639-3, plus `auto`), the ISO 639-1 codes the
 * reference docs also accept, English names for `$vectaraLangName`, and a small detector for `auto`.
 */

/** ISO 639-3 code → [ISO 639-1 code, English name], the reference's `Language` enum without `auto`. */
const LANGUAGES = {
  eng: ['en', 'English'],
  deu: ['de', 'German'],
  fra: ['fr', 'French'],
  zho: ['zh', 'Chinese'],
  kor: ['ko', 'Korean'],
  ara: ['ar', 'Arabic'],
  rus: ['ru', 'Russian'],
  tha: ['th', 'Thai'],
  nld: ['nl', 'Dutch'],
  ita: ['it', 'Italian'],
  por: ['pt', 'Portuguese'],
  spa: ['es', 'Spanish'],
  jpn: ['ja', 'Japanese'],
  pol: ['pl', 'Polish'],
  tur: ['tr', 'Turkish'],
  vie: ['vi', 'Vietnamese'],
  ind: ['id', 'Indonesian'],
  ces: ['cs', 'Czech'],
  ukr: ['uk', 'Ukrainian'],
  ell: ['el', 'Greek'],
  heb: ['he', 'Hebrew'],
  fas: ['fa', 'Persian'],
  hin: ['hi', 'Hindi'],
  urd: ['ur', 'Urdu'],
  swe: ['sv', 'Swedish'],
  ben: ['bn', 'Bengali'],
  msa: ['ms', 'Malay'],
  ron: ['ro', 'Romanian'],
} as const satisfies Record<string, readonly [string, string]>;

export type LanguageCode = keyof typeof LANGUAGES;

/** Every value `response_language` takes: `auto`, the ISO 639-3 codes, and their ISO 639-1 forms. */
export const RESPONSE_LANGUAGES: readonly string[] = ['auto', ...Object.keys(LANGUAGES), ...Object.values(LANGUAGES).map(([two]) => two)];

/** The language an answer is asked for: a code of the enum, or `auto` when the query's language was not recognised. */
export interface ResponseLanguage {
  readonly code: LanguageCode | 'auto';
  /** What `$vectaraLangName` says, e.g. "German", or "the language of the query" when it was not recognised. */
  readonly name: string;
}

export const UNDETECTED: ResponseLanguage = { code: 'auto', name: 'the language of the query' };

/** The ISO 639-3 code of a `response_language` value (either form); undefined for `auto` or an unknown value. */
export function languageCode(value: string): LanguageCode | undefined {
  const lower = value.toLowerCase();
  if (lower in LANGUAGES) return lower as LanguageCode;
  return (Object.keys(LANGUAGES) as LanguageCode[]).find((code) => LANGUAGES[code][0] === lower);
}

/** The language to answer in: the requested one, or for `auto` (or nothing) the one detected in the query. */
export function responseLanguage(requested: string | undefined, query: string): ResponseLanguage {
  const code = requested && requested !== 'auto' ? languageCode(requested) : detectLanguage(query);
  return code ? { code, name: LANGUAGES[code][1] } : UNDETECTED;
}

/** Scripts that name one language, or a family told apart by letters of its own (checked in order). */
const SCRIPTS: readonly [RegExp, LanguageCode | ((text: string) => LanguageCode)][] = [
  [/[\u3040-\u30ff]/, 'jpn'],
  [/[\uac00-\ud7af\u1100-\u11ff]/, 'kor'],
  [/[\u4e00-\u9fff]/, 'zho'],
  [/[\u0e00-\u0e7f]/, 'tha'],
  [/[\u0590-\u05ff]/, 'heb'],
  [/[\u0600-\u06ff]/, (t) => (/[ٹڈڑںے]/.test(t) ? 'urd' : /[پچژگ]/.test(t) ? 'fas' : 'ara')],
  [/[\u0900-\u097f]/, 'hin'],
  [/[\u0980-\u09ff]/, 'ben'],
  [/[\u0370-\u03ff]/, 'ell'],
  [/[\u0400-\u04ff]/, (t) => (/[іїєґ]/i.test(t) ? 'ukr' : 'rus')],
];

/** Frequent short words of the Latin-script languages; a query's language is the one whose words it uses most. */
const FUNCTION_WORDS: Partial<Record<LanguageCode, readonly string[]>> = {
  eng: ['the', 'is', 'are', 'what', 'how', 'which', 'who', 'why', 'does', 'do', 'of', 'and', 'in', 'to', 'for', 'with', 'can', 'was', 'were'],
  deu: ['der', 'die', 'das', 'ist', 'sind', 'und', 'wie', 'was', 'wer', 'warum', 'welche', 'nicht', 'mit', 'für', 'ein', 'eine', 'auf', 'von', 'zu', 'ich'],
  fra: ['le', 'la', 'les', 'est', 'sont', 'et', 'comment', 'quel', 'quelle', 'pourquoi', 'qui', 'des', 'une', 'pour', 'avec', 'dans', 'du', 'que', 'ce'],
  spa: ['el', 'los', 'las', 'es', 'son', 'y', 'cómo', 'qué', 'cuál', 'por', 'quién', 'una', 'para', 'con', 'del', 'que', 'en', 'se', 'está'],
  por: ['o', 'os', 'as', 'é', 'são', 'e', 'como', 'qual', 'quem', 'uma', 'para', 'com', 'do', 'da', 'não', 'em', 'que', 'está', 'por'],
  ita: ['il', 'lo', 'gli', 'è', 'sono', 'e', 'come', 'quale', 'perché', 'chi', 'una', 'per', 'con', 'del', 'della', 'che', 'non', 'di'],
  nld: ['de', 'het', 'een', 'is', 'zijn', 'en', 'hoe', 'wat', 'wie', 'waarom', 'welke', 'niet', 'met', 'voor', 'van', 'op', 'ik'],
  pol: ['jest', 'są', 'i', 'jak', 'co', 'kto', 'dlaczego', 'który', 'nie', 'się', 'na', 'w', 'z', 'do', 'czy', 'to'],
  tur: ['bir', 've', 'bu', 'ne', 'nasıl', 'neden', 'kim', 'hangi', 'için', 'ile', 'mi', 'mı', 'değil', 'var', 'nedir'],
  vie: ['là', 'và', 'của', 'có', 'không', 'những', 'như', 'thế', 'nào', 'gì', 'tại', 'sao', 'được', 'cho', 'người'],
  ind: ['yang', 'dan', 'adalah', 'apa', 'bagaimana', 'siapa', 'mengapa', 'tidak', 'dengan', 'untuk', 'dari', 'ini', 'itu', 'di', 'ke'],
  ces: ['je', 'jsou', 'a', 'jak', 'co', 'kdo', 'proč', 'který', 'není', 'se', 'na', 'v', 's', 'do', 'že', 'to'],
  swe: ['är', 'och', 'hur', 'vad', 'vem', 'varför', 'vilken', 'inte', 'med', 'för', 'en', 'ett', 'på', 'av', 'det', 'som'],
  ron: ['este', 'sunt', 'și', 'cum', 'ce', 'cine', 'care', 'nu', 'cu', 'pentru', 'un', 'o', 'în', 'la'],
};

/** Letters that only one of the Latin-script languages uses (among these): each counts as two function words. */
const OWN_LETTERS: Partial<Record<LanguageCode, RegExp>> = {
  deu: /ß/g,
  spa: /[ñ¿¡]/g,
  por: /[ãõ]/g,
  tur: /[ğış]/g,
  pol: /[łąężźćń]/g,
  ces: /[řůě]/g,
  swe: /å/g,
  ron: /[șț]/g,
  vie: /[đơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ]/g,
};

/**
 * The language of a query, when it shows: by script for the non-Latin scripts, by function words for the
 * Latin ones (ties and queries without such words are not guessed). A heuristic for `auto`, which the
 * reference also calls imperfect; callers who know the language should send it.
 */
export function detectLanguage(text: string): LanguageCode | undefined {
  for (const [script, language] of SCRIPTS) if (script.test(text)) return typeof language === 'string' ? language : language(text);
  const words = text.toLowerCase().match(/\p{L}+/gu) ?? [];
  let best: LanguageCode | undefined;
  let bestScore = 0;
  let tie = false;
  for (const [code, list] of Object.entries(FUNCTION_WORDS) as [LanguageCode, readonly string[]][]) {
    const score = words.filter((w) => list.includes(w)).length + 2 * (text.toLowerCase().match(OWN_LETTERS[code] ?? /$^/g)?.length ?? 0);
    if (score > bestScore) [best, bestScore, tie] = [code, score, false];
    else if (score === bestScore && score > 0) tie = true;
  }
  return tie ? undefined : best;
}
