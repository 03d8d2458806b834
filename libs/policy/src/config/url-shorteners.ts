/**
 * Public URL shorteners hide the destination from the recipient and are the classic carrier of
 * spam links, so they are refused; a customer's own or branded domain is fine. Data, versioned with
 * the content rules. A host matches when it equals an entry or is a subdomain of it (www.bit.ly).
 */
export const URL_SHORTENERS: readonly string[] = [
  'bit.ly', 'bitly.com', 'bit.do', 'tinyurl.com', 't.co', 'goo.gl', 'ow.ly', 'is.gd', 'v.gd', 'buff.ly',
  'rebrand.ly', 'cutt.ly', 'shorturl.at', 'tiny.cc', 'tiny.one', 'rb.gy', 't.ly', 's.id', 'lnkd.in',
  'soo.gd', 'clck.ru', 'shorte.st', 'adf.ly', 'bl.ink', 'short.gy', 'shorturl.com', 'x.co', 'qr.ae',
  'tr.im', 'po.st', 'mcaf.ee', 'su.pr', 'u.to', 'db.tt', 'snip.ly', 'urlz.fr', 'shrtco.de', '2u.pw',
];
