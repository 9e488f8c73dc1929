import { activeSink, checkpointConfig, describeAnchoring } from './checkpoint-config';
import { ConfigError } from './config-error';

describe('checkpoint settings', () => {
  const at = (env: NodeJS.ProcessEnv, databaseUrl?: string) => {
    const checkpoints = checkpointConfig(env);
    return { checkpoints, databaseUrl, dataDir: '/var/lib/tollgate' };
  };

  it('defaults to every 15 minutes into the data dir on the embedded database, off beside DATABASE_URL', () => {
    expect(checkpointConfig({}).intervalMs).toBe(15 * 60_000);
    expect(activeSink(at({}))).toEqual({ kind: 'file', dir: '/var/lib/tollgate/checkpoints', implicit: true });
    expect(activeSink(at({}, 'postgres://db/x'))).toBeUndefined();
    expect(describeAnchoring(at({}, 'postgres://db/x'))).toMatch(/^off \(set TOLLGATE_CHECKPOINT_SINK/);
    expect(describeAnchoring(at({}))).toBe('checkpoints every 15m to /var/lib/tollgate/checkpoints');
  });

  it('takes a directory, an http(s) URL or off', () => {
    expect(activeSink(at({ TOLLGATE_CHECKPOINT_SINK: 'file:///srv/anchors' }, 'postgres://db/x'))).toEqual({
      kind: 'file',
      dir: '/srv/anchors',
      implicit: false,
    });
    const http = at({ TOLLGATE_CHECKPOINT_SINK: 'https://anchor.example.com/in', TOLLGATE_CHECKPOINT_INTERVAL: '1h' });
    expect(activeSink(http)).toEqual({ kind: 'http', url: 'https://anchor.example.com/in' });
    expect(describeAnchoring(http)).toBe('checkpoints every 1h to POST https://anchor.example.com');
    expect(activeSink(at({ TOLLGATE_CHECKPOINT_SINK: 'off' }))).toBeUndefined();
  });

  it('refuses what it cannot use, naming the setting', () => {
    for (const v of ['ftp://x/y', 'file://host/dir', 'https://u:p@x.example/', 'relative/dir', 'file:///d?x=1'])
      expect(() => checkpointConfig({ TOLLGATE_CHECKPOINT_SINK: v })).toThrow(/TOLLGATE_CHECKPOINT_SINK/);
    for (const v of ['0', '2d', 'soon', '-5', '90000'])
      expect(() => checkpointConfig({ TOLLGATE_CHECKPOINT_INTERVAL: v })).toThrow(ConfigError);
    expect(checkpointConfig({ TOLLGATE_CHECKPOINT_INTERVAL: '2' }).intervalMs).toBe(2000);
    expect(checkpointConfig({ TOLLGATE_CHECKPOINT_INTERVAL: '1d' }).intervalMs).toBe(86_400_000);
  });
});
