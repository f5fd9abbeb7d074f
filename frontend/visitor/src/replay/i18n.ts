// The replay and live view's words, in the languages of Rapport's live-view link
// (spec 2.13): en, de, jp (Japanese, as the spec spells it), uk and ru. The
// element's `data-lang` picks one; anything else falls back to English.

const en = {
  loading: 'Loading the recording…',
  nothing: 'Nothing was recorded in this session yet.',
  failed: 'The recording could not be loaded. Reload the page to try again.',
  jumpTo: 'Jump to',
  page: 'Page',
  error: 'Error',
  visitor: 'Visitor',
  agent: 'Agent',
  waiting: "Waiting for the visitor's page…",
  live: 'Live',
  ended: 'The session has ended.',
  hidden: 'The visitor switched to another tab or window.',
  left: 'The visitor left this page.',
  leftPage: 'Left the page',
  lost: 'Connection lost, reconnecting…',
  liveView: "Live view of the visitor's page",
  replay: 'Session replay',
  playPause: 'Play or pause',
  fullscreen: 'Full screen',
  skipIdle: 'Skip idle time',
};
export type Strings = typeof en;

const all: Record<string, Strings> = {
  en,
  de: {
    loading: 'Die Aufzeichnung wird geladen…',
    nothing: 'In dieser Sitzung wurde noch nichts aufgezeichnet.',
    failed: 'Die Aufzeichnung konnte nicht geladen werden. Laden Sie die Seite neu, um es erneut zu versuchen.',
    jumpTo: 'Springen zu',
    page: 'Seite',
    error: 'Fehler',
    visitor: 'Besucher',
    agent: 'Agent',
    waiting: 'Warten auf die Seite des Besuchers…',
    live: 'Live',
    ended: 'Die Sitzung ist beendet.',
    hidden: 'Der Besucher hat zu einem anderen Tab oder Fenster gewechselt.',
    left: 'Der Besucher hat diese Seite verlassen.',
    leftPage: 'Seite verlassen',
    lost: 'Verbindung unterbrochen, neuer Versuch…',
    liveView: 'Live-Ansicht der Seite des Besuchers',
    replay: 'Sitzungswiedergabe',
    playPause: 'Abspielen oder anhalten',
    fullscreen: 'Vollbild',
    skipIdle: 'Leerlauf überspringen',
  },
  jp: {
    loading: '録画を読み込んでいます…',
    nothing: 'このセッションではまだ何も録画されていません。',
    failed: '録画を読み込めませんでした。ページを再読み込みしてもう一度お試しください。',
    jumpTo: '移動先',
    page: 'ページ',
    error: 'エラー',
    visitor: '訪問者',
    agent: '担当者',
    waiting: '訪問者のページを待っています…',
    live: 'ライブ',
    ended: 'セッションは終了しました。',
    hidden: '訪問者は別のタブまたはウィンドウに切り替えました。',
    left: '訪問者はこのページを離れました。',
    leftPage: 'ページを離れました',
    lost: '接続が切れました。再接続しています…',
    liveView: '訪問者のページのライブ表示',
    replay: 'セッションの再生',
    playPause: '再生または一時停止',
    fullscreen: '全画面',
    skipIdle: '待ち時間をスキップ',
  },
  uk: {
    loading: 'Завантаження запису…',
    nothing: 'У цьому сеансі ще нічого не записано.',
    failed: 'Не вдалося завантажити запис. Перезавантажте сторінку, щоб спробувати ще раз.',
    jumpTo: 'Перейти до',
    page: 'Сторінка',
    error: 'Помилка',
    visitor: 'Відвідувач',
    agent: 'Агент',
    waiting: 'Очікування сторінки відвідувача…',
    live: 'Наживо',
    ended: 'Сеанс завершено.',
    hidden: 'Відвідувач перейшов на іншу вкладку або вікно.',
    left: 'Відвідувач залишив цю сторінку.',
    leftPage: 'Залишив сторінку',
    lost: "З'єднання втрачено, повторне підключення…",
    liveView: 'Перегляд сторінки відвідувача наживо',
    replay: 'Відтворення сеансу',
    playPause: 'Відтворити або призупинити',
    fullscreen: 'На весь екран',
    skipIdle: 'Пропускати бездіяльність',
  },
  ru: {
    loading: 'Загрузка записи…',
    nothing: 'В этом сеансе пока ничего не записано.',
    failed: 'Не удалось загрузить запись. Перезагрузите страницу, чтобы попробовать снова.',
    jumpTo: 'Перейти к',
    page: 'Страница',
    error: 'Ошибка',
    visitor: 'Посетитель',
    agent: 'Агент',
    waiting: 'Ожидание страницы посетителя…',
    live: 'В эфире',
    ended: 'Сеанс завершён.',
    hidden: 'Посетитель переключился на другую вкладку или окно.',
    left: 'Посетитель покинул эту страницу.',
    leftPage: 'Покинул страницу',
    lost: 'Соединение потеряно, переподключение…',
    liveView: 'Просмотр страницы посетителя в реальном времени',
    replay: 'Воспроизведение сеанса',
    playPause: 'Воспроизвести или приостановить',
    fullscreen: 'Во весь экран',
    skipIdle: 'Пропускать бездействие',
  },
};

/** The strings for `data-lang` (case-insensitive; `ja` is taken for `jp` too). */
export function strings(lang?: string | null): Strings {
  const code = (lang || 'en').toLowerCase().split('-')[0];
  return all[code === 'ja' ? 'jp' : code] || en;
}

/** `lang` attribute value for the chosen language (BCP 47 says `ja`). */
export function langTag(lang?: string | null): string {
  const code = (lang || 'en').toLowerCase().split('-')[0];
  if (code === 'jp' || code === 'ja') return 'ja';
  return all[code] ? code : 'en';
}
