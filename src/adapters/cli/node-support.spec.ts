import { outdatedNode } from './node-support';

describe('outdatedNode', () => {
  it('says nothing on the Node versions CI tests', () => {
    for (const v of ['22.12.0', '22.23.3', '23.0.0', '24.21.0', '26.1.0']) expect(outdatedNode(v)).toBeUndefined();
  });

  it('names an older Node, and the end of life of 20', () => {
    expect(outdatedNode('20.20.2')).toMatch(
      /^Node 20\.20\.2 is not supported: .*22\.12\+.*24; Node 20 reached its end of life on 2026-04-30/,
    );
    const early22 = outdatedNode('22.11.0');
    expect(early22).toMatch(/^Node 22\.11\.0 is not supported/);
    expect(early22).not.toMatch(/end of life/);
  });
});
