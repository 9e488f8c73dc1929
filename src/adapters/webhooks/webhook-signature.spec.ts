import { Webhook } from 'standardwebhooks';
import { newWebhookSecret, signWebhook, webhookKey } from './webhook-signature';

describe('Standard Webhooks signatures', () => {
  it('match the reference implementation', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const body = '{"test": 2432232314}';
    const headers = signWebhook(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, body);
    expect(headers).toEqual({
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': new Webhook(secret).sign('msg_p5jXN8AQM9LWM0D4loKWxJek', new Date(1614265330 * 1000), body),
    });
  });

  it('verify with the receiver library for a fresh secret', () => {
    const secret = newWebhookSecret();
    const body = JSON.stringify({ type: 'ToolCallApproved', data: { id: 'e1' } });
    const headers = signWebhook(secret, 'e1', Math.floor(Date.now() / 1000), body);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('refuse secrets that are not whsec_ and base64 of 24 to 64 bytes', () => {
    expect(webhookKey(newWebhookSecret())).toHaveLength(32);
    for (const bad of [
      'hunter2',
      'whsec_',
      'whsec_not base64!',
      'whsec_' + Buffer.alloc(8).toString('base64'),
      'whsec_' + Buffer.alloc(65).toString('base64'),
    ]) {
      expect(webhookKey(bad)).toBeNull();
    }
  });
});
