// Stock phrases of unsolicited sales and money mail. Each entry is one idea, so a text repeating
// the same pitch counts once; BODY_SALES_PITCH weighs how many different ones a message uses.
// Ordinary mail uses one or two of them now and then; a sales pitch stacks many.
export const SALES_PHRASES: readonly RegExp[] = [
  /\b100\s?%\s(?:free|guaranteed|satisf|natural|legal|risk)/i,
  /\brisk[- ]free\b/i,
  /\bno obligation\b/i,
  /\bact now\b/i,
  /\blimited time\b/i,
  /\border (?:now|today)\b/i,
  /\bclick (?:here|below)\b/i,
  /\bfree (?:gift|trial|offer|info|quote|consultation|sample)/i,
  /\bmoney[- ]back\b/i,
  /\bmillions? (?:of )?dollars\b/i,
  /\bmake (?:big )?money\b/i,
  /\bwork(?:ing)? (?:from|at) home\b/i,
  /\bextra (?:cash|income)\b/i,
  /\b(?:lowest|low) (?:mortgage |interest )?rates?\b/i,
  /\bdear (?:friend|sir|madam)\b/i,
  /\bthis is not (?:a )?spam\b/i,
  /\byou(?: are|'re) receiving this\b/i,
  /\bspecial (?:offer|promotion)\b/i,
  /\bapply (?:now|online)\b/i,
  /\bcredit card/i,
  /\b(?:debt|loan|mortgage|refinanc)/i,
  /\bonce in a lifetime\b/i,
  /\bsatisfaction guaranteed\b/i,
  /\bdon'?t delete\b/i,
  /\bcall (?:now|today|toll[- ]free)\b/i,
  /\b(?:buy|order) direct\b/i,
  /\bwhile supplies last\b/i,
  /\bno (?:credit )?checks?\b/i,
  /\bcash bonus\b/i,
  /\bfinancial freedom\b/i,
  /\bincrease (?:your )?(?:sales|traffic|income)\b/i,
  /\bbe your own boss\b/i,
  /\bhome[- ]based business\b/i,
  /\bmlm\b/i,
  /\bonline pharmacy\b/i,
  /\bviagra\b/i,
  /\bweight loss\b/i,
  /\blose (?:up to )?\d+ ?(?:lbs|pounds)\b/i,
  /\bcancel at any time\b/i,
  /\bno hidden (?:costs|fees)\b/i,
  /\bwin(?:ner)?\b.{0,20}\bprize\b/i,
  /\bcongratulations\b/i,
  /\burgent\b/i,
  /\bguarantee/i,
  /\$\s?\d{1,3}(?:,\d{3})+/,
  /\bfree\b/i,
];

/** Large free-mail services: anyone can open a mailbox there, so they prove nothing about a sender. */
export const FREEMAIL_DOMAINS: readonly string[] = [
  'aol.com', 'email.com', 'excite.com', 'gmail.com', 'gmx.de', 'gmx.net', 'googlemail.com', 'hotmail.co.uk',
  'hotmail.com', 'hotmail.fr', 'icloud.com', 'juno.com', 'live.com', 'lycos.com', 'mail.com', 'mail.ru', 'me.com',
  'msn.com', 'netscape.net', 'outlook.com', 'protonmail.com', 'rediffmail.com', 'usa.net', 'web.de', 'yahoo.co.uk',
  'yahoo.com', 'yahoo.fr', 'yandex.ru', 'zoho.com',
];

/**
 * Themes of advance-fee fraud ("help me move a fortune, keep a share"). One regexp per theme, so
 * BODY_ADVANCE_FEE needs several different ones: any single theme turns up in ordinary mail.
 */
export const ADVANCE_FEE_THEMES: readonly RegExp[] = [
  /\b(?:\d+(?:[.,]\d+)?\s*(?:m|million|billion)\b[^.]{0,30}\b(?:dollars|usd|us\$|pounds|euros?)|(?:us\$|usd)\s?\d+(?:[.,]\d+)*\s*(?:m\b|million))/i,
  /\bnext of kin\b/i,
  /\b(?:beneficiary|beneficiaries)\b/i,
  /\b(?:foreign|overseas|offshore) (?:partner|account|bank)/i,
  /\btransfer(?:ring|red)?\b[^.]{0,40}\b(?:funds?|sum|money)\b/i,
  /\b(?:strictly|utmost|absolute) (?:confidential|secrecy|confidence)/i,
  /\bthe late (?:father|husband|mother|president|head of state|general|chief)\b|\bmy late (?:father|husband)\b/i,
  /\b(?:central bank|ministry of|government of) \w+/i,
  /\b(?:barrister|solicitor|attorney at law)\b/i,
  /\b(?:\d{1,2}(?:\.\d)?\s?%|percent(?:age)?) (?:of (?:the|this) (?:total )?(?:sum|fund|money|amount))/i,
  /\b(?:i am|my name is) (?:mr|mrs|dr|prince|princess|chief|engr|barrister)\.?\s/i,
  /\b(?:crude oil|contract (?:sum|payment)|over-?invoic)/i,
  /\b(?:reply|respond|contact me) (?:urgently|immediately)|\burgent (?:reply|response)\b/i,
  /\b(?:security|finance|diplomatic) (?:company|firm|courier)\b/i,
  /\b(?:in|to|visit) your country\b/i,
  /\bmodalit(?:y|ies)\b/i,
  /\bthe total sum\b/i,
  /\bforeigner\b/i,
  /\b(?:disburs|remitt)/i,
  // An "ATTN:" line opening the letter, where a business letter would name a person.
  /^\s*ATTN\b/m,
];

/**
 * Themes of stock touting ("pump and dump" newsletters). One regexp per theme; a real investor
 * newsletter uses one or two of them, a tout stacks them.
 */
export const STOCK_TOUT_THEMES: readonly RegExp[] = [
  /\bstock symbol\b|\bsymbol:\s*[A-Z]{3,5}\b/i,
  /\bstrong buy\b/i,
  /\b(?:otc ?bb|pink sheets)\b/i,
  /\bforward[- ]looking statements?\b/i,
  /\bshare prices?\b/i,
  /\bfor immediate release\b/i,
  /\b(?:target|projected) price\b/i,
];
