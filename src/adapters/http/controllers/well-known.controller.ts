import { Controller, Get, Header, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RECEIPTS, ReceiptSigner } from '../../../application/ports';
import { Public } from '../auth';
import { ApiProblems } from '../../api/dto/problem.dto';
import { JwksView } from '../../api/dto/views.dto';
import { POLICY_JSON_SCHEMA, POLICY_SCHEMA_PATH, SCHEMA_CONTENT_TYPE } from '../../api/policy-schema';

/** Documents anyone may fetch, to check what Tollgate signs and to write what it reads. */
@Controller()
export class WellKnownController {
  constructor(@Inject(RECEIPTS) private readonly receipts: ReceiptSigner) {}

  /** Public keys of execution receipts, so a tool's backend can check approval without trusting the agent. */
  @Get('.well-known/jwks.json')
  @Public()
  @Header('Cache-Control', 'public, max-age=300')
  @ApiTags('receipts')
  @ApiOperation({
    operationId: 'getJwks',
    summary: 'Public keys of receipts and checkpoints',
    description:
      'No token. The Ed25519 keys (JWKS) that verify execution receipts and audit checkpoints; cacheable for 5 minutes.',
    security: [],
  })
  @ApiOkResponse({ type: JwksView })
  @ApiProblems('rate_limited', 'unavailable')
  jwks() {
    return this.receipts.jwks();
  }

  /** The JSON Schema of a policy document, for editors (`# yaml-language-server: $schema=<this URL>`). */
  @Get(POLICY_SCHEMA_PATH.slice(1))
  @Public()
  @Header('Content-Type', SCHEMA_CONTENT_TYPE)
  @Header('Cache-Control', 'public, max-age=300')
  @ApiTags('policy')
  @ApiOperation({
    operationId: 'getPolicySchema',
    summary: 'JSON Schema of the policy document',
    description:
      'No token. JSON Schema (draft 2020-12) of what PUT /v1/policy takes. Point an editor at it: `# yaml-language-server: $schema=<server>/schemas/policy.json` as the first line of a policy.yaml.',
    security: [],
  })
  @ApiOkResponse({
    description: 'The JSON Schema',
    content: { [SCHEMA_CONTENT_TYPE]: { schema: { type: 'object', additionalProperties: true } } },
  })
  @ApiProblems('rate_limited')
  policySchema() {
    return POLICY_JSON_SCHEMA;
  }
}
