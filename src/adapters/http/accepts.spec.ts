import { preferredType } from './accepts';

const OFFERED = ['application/jose', 'application/json'];

describe('preferredType (Accept negotiation, as Express chose)', () => {
  it('takes the first offered type when the client says nothing or accepts anything', () => {
    expect(preferredType(undefined, OFFERED)).toBe('application/jose');
    expect(preferredType('*/*', OFFERED)).toBe('application/jose');
    expect(preferredType('application/*', OFFERED)).toBe('application/jose');
  });

  it('takes the type the client names, over wildcards and by its q', () => {
    expect(preferredType('application/json', OFFERED)).toBe('application/json');
    expect(preferredType('application/json, */*;q=0.1', OFFERED)).toBe('application/json');
    expect(preferredType('application/jose;q=0.5, application/json', OFFERED)).toBe('application/json');
    expect(preferredType('application/json;q=0.5, application/jose', OFFERED)).toBe('application/jose');
    expect(preferredType(['text/html', 'application/json'], OFFERED)).toBe('application/json');
  });

  it('takes none that the client refuses or does not name', () => {
    expect(preferredType('text/html', OFFERED)).toBeUndefined();
    expect(preferredType('application/json;q=0, application/jose;q=0', OFFERED)).toBeUndefined();
    expect(preferredType('*/*, application/json;q=0', OFFERED)).toBe('application/jose');
  });
});
