import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { meView } from '../../../application/views/views';
import { Principal } from '../../../domain/shared/actor';
import { CurrentPrincipal } from '../auth';
import { ApiProblems, BEARER_PROBLEMS } from '../../api/dto/problem.dto';
import { MeView } from '../../api/dto/views.dto';

/**
 * Who a token is, for programs that act on someone's behalf: the MCP gateway checks that a person's token is of
 * its own tenant (and is the person it was configured for) before it lets them in, rather than decoding the JWT
 * itself and trusting claims it cannot verify.
 */
@ApiTags('identity')
@ApiBearerAuth()
@Controller('v1')
export class MeController {
  @Get('me')
  @ApiOperation({
    operationId: 'getMe',
    summary: 'Who the caller is',
    description:
      "Any valid token, agent or person. The caller's id, tenant, kind, name, email and roles as Tollgate counts them (an agent token is `agent` only).",
  })
  @ApiOkResponse({ type: MeView })
  @ApiProblems(...BEARER_PROBLEMS)
  me(@CurrentPrincipal() p: Principal): MeView {
    return meView(p);
  }
}
