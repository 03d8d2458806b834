import { describe, it } from 'vitest';
import { activeCustomer, aSend, moduleToggled } from '../testing/fixtures.ts';
import { given } from '../testing/given-when-then.ts';

describe('module_enabled', () => {
  it('given a new customer, when sending through the API, then the api module is on by default', () => {
    given(activeCustomer()).when(aSend({ source: 'api' })).thenAccepted();
  });

  it('given a new customer, when sending through the PBX, then 403 module_not_enabled (pbx is off by default)', () => {
    given(activeCustomer()).when(aSend({ source: 'pbx' })).thenRejected('module_not_enabled', { rule: 'module_enabled', module: 'pbx' });
  });

  it('given the pbx module was switched on, when sending through the PBX, then it passes', () => {
    given([...activeCustomer(), moduleToggled('pbx', true)]).when(aSend({ source: 'pbx' })).thenAccepted();
  });

  it('given the api module was switched off, when sending through the API, then 403 module_not_enabled', () => {
    given([...activeCustomer(), moduleToggled('api', false)]).when(aSend()).thenRejected('module_not_enabled', { module: 'api' });
  });
});
