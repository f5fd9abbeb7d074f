// Script co-browsing's words on the visitor's page (see script_cobrowse.ts).

// The prompt's and the bar's words, in the chat's languages; `{agent}` is the
// agent's name, `someone` stands in when Rapport sent none.
const en = {
  request: '{agent} would like to browse with you. They will see this page and can point at things.',
  requestLabel: 'Co-browsing request',
  accept: 'Accept',
  decline: 'Decline',
  bar: '{agent} is browsing with you.',
  barLabel: 'Co-browsing',
  grant: 'Let them click and type',
  revoke: 'Take back control',
  end: 'End',
  ended: '{agent} stopped browsing with you.',
  someone: 'An agent',
};
type Strings = typeof en;
export const STRINGS: Record<string, Strings> = {
  en,
  de: {
    request: '{agent} möchte gemeinsam mit Ihnen browsen, sieht dann diese Seite und kann auf Dinge zeigen.',
    requestLabel: 'Anfrage zum gemeinsamen Browsen',
    accept: 'Annehmen',
    decline: 'Ablehnen',
    bar: '{agent} browst gemeinsam mit Ihnen.',
    barLabel: 'Gemeinsames Browsen',
    grant: 'Klicken und Tippen erlauben',
    revoke: 'Kontrolle zurücknehmen',
    end: 'Beenden',
    ended: '{agent} browst nicht mehr mit Ihnen.',
    someone: 'Ein Mitarbeiter',
  },
  ja: {
    request: '{agent}から共同ブラウジングのリクエストが届きました。承諾すると、このページが相手に表示され、画面上の場所を指し示してもらえます。',
    requestLabel: '共同ブラウジングのリクエスト',
    accept: '承諾',
    decline: '拒否',
    bar: '{agent}と共同ブラウジング中です。',
    barLabel: '共同ブラウジング',
    grant: 'クリックと入力を許可',
    revoke: '操作権を取り戻す',
    end: '終了',
    ended: '{agent}との共同ブラウジングが終了しました。',
    someone: '担当者',
  },
  uk: {
    request: '{agent} хоче переглядати сайт разом із вами: бачитиме цю сторінку й зможе вказувати на її елементи.',
    requestLabel: 'Запит на спільний перегляд',
    accept: 'Прийняти',
    decline: 'Відхилити',
    bar: '{agent} переглядає сайт разом із вами.',
    barLabel: 'Спільний перегляд',
    grant: 'Дозволити клацати й вводити текст',
    revoke: 'Повернути керування',
    end: 'Завершити',
    ended: '{agent}: спільний перегляд завершено.',
    someone: 'Агент',
  },
  ru: {
    request: '{agent} хочет просматривать сайт вместе с вами: будет видеть эту страницу и сможет указывать на её элементы.',
    requestLabel: 'Запрос на совместный просмотр',
    accept: 'Принять',
    decline: 'Отклонить',
    bar: '{agent} просматривает сайт вместе с вами.',
    barLabel: 'Совместный просмотр',
    grant: 'Разрешить нажимать и вводить текст',
    revoke: 'Вернуть управление',
    end: 'Завершить',
    ended: '{agent}: совместный просмотр завершён.',
    someone: 'Агент',
  },
};

/** The first of the browser's languages that has strings, else English. */
export function pickLanguage(): string {
  for (const tag of [...(navigator.languages || []), navigator.language]) {
    const code = (tag || '').toLowerCase().split('-')[0];
    if (STRINGS[code]) return code;
  }
  return 'en';
}
