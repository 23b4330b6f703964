// English stop words excluded from Bayes tokens. Rspamd detects each part's
// language and uses that language's list; mailsift has no language detector yet, so only the
// cheap, high-frequency English list applies — words common to spam and ham alike that only
// dilute the OSB pairs around them.
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have he her him his how i if in into is it its ' +
    'me my no nor not of on or our ours she so than that the their them then there these they this those to too us was we ' +
    'were what when where which while who whom why will with would you your yours'
  ).split(' '),
);
