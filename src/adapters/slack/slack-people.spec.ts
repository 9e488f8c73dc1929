import { Logger } from '@nestjs/common';
import type { TollgateConfig } from '../../infrastructure/config/config';
import { SlackPeople, tenantMismatch } from './slack-people';

const slack = (tenant: string) => ({ tenant }) as TollgateConfig['slack'];
const oidc = (tenant: { fixed: string } | { claim: string }) => ({ tenant }) as TollgateConfig['oidc'];

describe('Slack and single sign-on tenants', () => {
  it('warns when single sign-on puts everyone in a fixed tenant Slack does not act in', () => {
    const warning = tenantMismatch({ oidc: oidc({ fixed: 'acme' }), slack: slack('default') });
    expect(warning).toContain('tenant "acme" (TOLLGATE_OIDC_TENANT)');
    expect(warning).toContain('tenant "default" (TOLLGATE_SLACK_TENANT, unset)');
    expect(warning).toContain('TOLLGATE_SLACK_TENANT=acme');
  });

  it('says nothing when they agree, when the tenant comes from a claim, or without single sign-on', () => {
    expect(tenantMismatch({ oidc: oidc({ fixed: 'acme' }), slack: slack('acme') })).toBeUndefined();
    expect(tenantMismatch({ oidc: oidc({ claim: 'org' }), slack: slack('default') })).toBeUndefined();
    expect(tenantMismatch({ oidc: undefined, slack: slack('default') })).toBeUndefined();
  });

  it('logs the warning once the Slack module starts', () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const config = { oidc: oidc({ fixed: 'acme' }), slack: slack('default') } as TollgateConfig;
      new SlackPeople(null as never, null as never, config).onModuleInit();
      expect(warn).toHaveBeenCalledWith(expect.stringContaining('TOLLGATE_SLACK_TENANT=acme'));
      warn.mockClear();
      new SlackPeople(null as never, null as never, { ...config, slack: slack('acme') }).onModuleInit();
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });
});
