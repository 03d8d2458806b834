import { describe, it } from 'vitest';
import { activeCustomer, aSend, moduleToggled } from '../testing/fixtures.ts';
import { accepted, given, rejected } from '../testing/given-when-then.ts';

describe('module_enabled', () => {
  it('given a new customer, when sending through the API, then the api module is on by default', () => {
    given(activeCustomer()).when(aSend({ source: 'api' })).then([accepted()]);
  });

  it('given a new customer, when sending through the PBX, then 403 module_not_enabled (pbx is off by default)', () => {
    given(activeCustomer()).when(aSend({ source: 'pbx' })).then([rejected('module_not_enabled')]).withDetails({ rule: 'module_enabled', module: 'pbx' });
  });

  it('given the pbx module was switched on, when sending through the PBX, then it passes', () => {
    given([...activeCustomer(), moduleToggled('pbx', true)]).when(aSend({ source: 'pbx' })).then([accepted()]);
  });

  it('given the api module was switched off, when sending through the API, then 403 module_not_enabled', () => {
    given([...activeCustomer(), moduleToggled('api', false)]).when(aSend()).then([rejected('module_not_enabled')]).withDetails({ module: 'api' });
  });
});
