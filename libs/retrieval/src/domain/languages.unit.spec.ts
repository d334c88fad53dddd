import { detectLanguage, languageCode, RESPONSE_LANGUAGES, responseLanguage } from './languages';

describe('response languages', () => {
  it('takes the reference enum, ISO 639-1 forms and auto', () => {
    expect(RESPONSE_LANGUAGES).toEqual(expect.arrayContaining(['auto', 'eng', 'deu', 'ron', 'en', 'de']));
    expect(languageCode('deu')).toBe('deu');
    expect(languageCode('DE')).toBe('deu');
    expect(languageCode('klingon')).toBeUndefined();
    expect(responseLanguage('fr', 'anything')).toEqual({ code: 'fra', name: 'French' });
  });

  it.each([
    ['What is the capital of France?', 'eng'],
    ['Wie schläft der Seeotter und warum ist das so?', 'deu'],
    ['Comment dorment les loutres de mer ?', 'fra'],
    ['¿Cómo duermen las nutrias marinas?', 'spa'],
    ['Como dormem as lontras marinhas? Não sei.', 'por'],
    ['Hoe slapen zeeotters en waarom is dat zo?', 'nld'],
    ['Jak śpią wydry morskie?', 'pol'],
    ['Deniz su samurları nasıl uyur?', 'tur'],
    ['Rái cá biển ngủ như thế nào?', 'vie'],
    ['Как спят морские выдры?', 'rus'],
    ['Як сплять морські видри? Її нема.', 'ukr'],
    ['ラッコはどうやって寝ますか？', 'jpn'],
    ['海獭怎么睡觉？', 'zho'],
    ['해달은 어떻게 잠을 자나요?', 'kor'],
    ['كيف تنام ثعالب البحر؟', 'ara'],
    ['Πώς κοιμούνται οι θαλάσσιες βίδρες;', 'ell'],
    ['समुद्री ऊदबिलाव कैसे सोते हैं?', 'hin'],
  ])('detects %s as %s', (query, code) => {
    expect(detectLanguage(query)).toBe(code);
  });

  it('does not guess when the query gives no sign, and says so to the prompt', () => {
    expect(detectLanguage('otters kelp 2024')).toBeUndefined();
    expect(responseLanguage('auto', 'otters kelp')).toEqual({ code: 'auto', name: 'the language of the query' });
    expect(responseLanguage(undefined, 'What do otters eat?')).toEqual({ code: 'eng', name: 'English' });
  });
});
