import { ConfigError, loadConfig } from './config';
import { grpcListenProblem } from './startup-errors';

describe('TOLLGATE_GRPC_PORT', () => {
  it('is PORT + 1 unless set (8081 beside HTTP’s 8080); a free port when PORT is 0; a port; or off', () => {
    expect(loadConfig({}).grpcPort).toBe(8081);
    expect(loadConfig({ PORT: '8080' }).grpcPort).toBe(8081);
    // A second instance on another PORT gets a gRPC port of its own, not the first one's 8081.
    expect(loadConfig({ PORT: '9000' }).grpcPort).toBe(9001);
    expect(loadConfig({ PORT: '8081' }).grpcPort).toBe(8082);
    expect(loadConfig({ PORT: '0' }).grpcPort).toBe(0);
    expect(loadConfig({ TOLLGATE_GRPC_PORT: '50051' }).grpcPort).toBe(50051);
    expect(loadConfig({ TOLLGATE_GRPC_PORT: '0' }).grpcPort).toBe(0);
    expect(loadConfig({ TOLLGATE_GRPC_PORT: 'off' }).grpcPort).toBeUndefined();
    expect(loadConfig({ TOLLGATE_GRPC_PORT: ' OFF ' }).grpcPort).toBeUndefined();
  });

  it('refuses what is not a port, and the port HTTP takes, naming the setting', () => {
    for (const bad of ['http', '-1', '65536', '80.5', 'on'])
      expect(() => loadConfig({ TOLLGATE_GRPC_PORT: bad })).toThrow(
        /^TOLLGATE_GRPC_PORT must be a port \(0 to 65535\) or off/,
      );
    expect(() => loadConfig({ TOLLGATE_GRPC_PORT: '8080' })).toThrow(ConfigError);
    expect(() => loadConfig({ PORT: '9000', TOLLGATE_GRPC_PORT: '9000' })).toThrow(
      /TOLLGATE_GRPC_PORT and PORT are both 9000/,
    );
    expect(() => loadConfig({ PORT: '65535' })).toThrow(
      /^PORT is 65535, so TOLLGATE_GRPC_PORT \(PORT \+ 1 by default\) must be set: a port, or off$/,
    );
    expect(loadConfig({ PORT: '65535', TOLLGATE_GRPC_PORT: 'off' }).grpcPort).toBeUndefined();
  });
});

describe('a gRPC port that cannot be bound', () => {
  it('reads grpc-js’s bind failures as settings to change', () => {
    const inUse = new Error(
      'No address added out of total 1 resolved errors: [listen EADDRINUSE: address already in use 127.0.0.1:8081]',
    );
    expect(grpcListenProblem(inUse, '127.0.0.1', 8081)?.message).toBe(
      'gRPC port 8081 on 127.0.0.1 is in use; set TOLLGATE_GRPC_PORT to a free port (or off), or stop what holds it',
    );
    const denied = new Error(
      'No address added out of total 1 resolved errors: [listen EACCES: permission denied 0.0.0.0:81]',
    );
    expect(grpcListenProblem(denied, '0.0.0.0', 81)?.message).toBe(
      'this user may not listen on gRPC port 81 (ports below 1024 need privileges); set TOLLGATE_GRPC_PORT, e.g. TOLLGATE_GRPC_PORT=8081',
    );
    expect(
      grpcListenProblem(
        new Error('Name resolution failed for target dns:nowhere.invalid:8081'),
        'nowhere.invalid',
        8081,
      )?.message,
    ).toMatch(/^HOST nowhere\.invalid is not an address of this machine/);
    expect(grpcListenProblem(new Error('something else'), '127.0.0.1', 8081)).toBeUndefined();
  });
});
