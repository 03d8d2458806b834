import { describe, it } from 'vitest';
import { activeCustomer, aSend } from '../testing/fixtures.ts';
import { accepted, given, rejected } from '../testing/given-when-then.ts';

describe('url_shortener', () => {
  it.each([
    ['Track your parcel: https://bit.ly/3xYz', 'bit.ly'],
    ['Details at tinyurl.com/abc123', 'tinyurl.com'],
    ['See http://t.co/x1', 't.co'],
    ['Open https://www.bit.ly/a', 'bit.ly'],
    ['Form: HTTPS://CUTT.LY/q', 'cutt.ly'],
    ['Link rb.gy/zz and shorturl.at/ab', 'rb.gy'],
  ])('refuses %s', (text, shortener) => {
    given(activeCustomer()).when(aSend({ text })).then([rejected('policy_violation', { reason: 'url_shortener' })]).withDetails({ rule: 'url_shortener', reason: 'url_shortener', shortener });
  });

  it.each([
    'Track your parcel: https://track.example.com/p/1234',
    'Your branded link: https://go.acme-shop.co/o/1234',
    'Invoice at https://microsoft.com/billing',
    'Write to help@bit.ly.example.org if it fails',
    'Visit our office at 10 Main St., e.g. before 5pm.',
    'Login at https://app.mysaas.io/login',
  ])('allows own and branded domains: %s', (text) => {
    given(activeCustomer()).when(aSend({ text })).then([accepted()]);
  });
});
