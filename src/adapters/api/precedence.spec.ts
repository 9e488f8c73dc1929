import { DomainError, ValidationError } from '../../domain/shared/domain-error';
import { accessBeforeFaults } from './precedence';

const bad = () => {
  throw new ValidationError([{ path: 'decision', message: 'must be one of: approve, reject, always_allow' }]);
};
const notFound = () => Promise.reject(new DomainError('not_found', 'not_found', 'Tool call tc_1 not found'));

describe('one order of checks for every transport: 404, then 403, then 400', () => {
  it('a good request reads no access at all', async () => {
    const access = jest.fn();
    await expect(accessBeforeFaults(() => 'command', access)).resolves.toBe('command');
    expect(access).not.toHaveBeenCalled();
  });

  it('a bad request on something the caller cannot see is a 404, not a 400', async () => {
    await expect(accessBeforeFaults(bad, notFound)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('a bad request from someone who may not act is a 403, with the refusal for their access', async () => {
    const access = () => Promise.resolve({ isAgent: true });
    await expect(
      accessBeforeFaults(
        bad,
        access,
        (a) => !a.isAgent,
        () => 'Agent tokens cannot decide tool calls',
      ),
    ).rejects.toMatchObject({ code: 'forbidden', message: 'Agent tokens cannot decide tool calls' });
  });

  it('a bad request from someone who may act is the 400 itself', async () => {
    await expect(accessBeforeFaults(bad, () => Promise.resolve({}))).rejects.toBeInstanceOf(ValidationError);
  });
});
